package cli

import (
	"github.com/spf13/cobra"
)

func newUI(sys IO, conn *connFlags) *cobra.Command {
	return &cobra.Command{Use: "ui", Hidden: true}
}
