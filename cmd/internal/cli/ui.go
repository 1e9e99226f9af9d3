package cli

import (
	"context"
	"fmt"
	"io"
	"net"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"governor.dev/governor/cmd/internal/config"
	"governor.dev/governor/cmd/internal/tui"
	"governor.dev/governor/internal/clientconn"
)

func newUI(sys IO, conn *connFlags) *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:   "ui [--config FILE]",
		Short: "A live view of your scope's children and their use, where caps, defaults and cancellation can be changed",
		Long: "ui lists the children of your scope (a tenant's runs, with a tenant's key) with what each has\n" +
			"used against its caps, read again every second. With --config (or -config) it takes the address,\n" +
			"the admin key and the CA from governord's own configuration file and starts at the root.",
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := conn.config(cmd)
			if err != nil {
				return err
			}
			if file != "" {
				if cfg, err = fromDaemonConfig(cmd, conn, cfg, file); err != nil {
					return err
				}
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), callTimeout)
			defer cancel()
			s, err := openSession(ctx, cfg, "governor ui")
			if err != nil {
				return err
			}
			defer s.Close()
			if !isTerminal(sys.Stdin) || !isTerminal(sys.Stdout) {
				return usagef("governor ui draws a live screen, so its standard input and output must be a terminal; " +
					"run it in a terminal, or use governor describe to print the tree")
			}
			defer restoreTerminal(sys.Stdout) // after an error or a panic too
			p := tea.NewProgram(tui.New(s.API(), tui.Options{SessionTTL: s.TTL()}),
				tea.WithInput(sys.Stdin), tea.WithOutput(sys.Stdout), tea.WithAltScreen(), tea.WithContext(cmd.Context()))
			_, err = p.Run()
			return err
		},
	}
	cmd.Flags().StringVar(&file, "config", "", "governord's configuration file: its address, admin key and certificate")
	return cmd
}

// fromDaemonConfig takes the address, the admin key and the CA from
// governord's configuration. --addr, --tls and --ca-file still win.
func fromDaemonConfig(cmd *cobra.Command, conn *connFlags, c clientconn.Config, file string) (clientconn.Config, error) {
	d, err := config.Load(file)
	if err != nil {
		return c, usagef("--config: %v", err)
	}
	if conn.addr == "" {
		host, port, err := net.SplitHostPort(d.Listen)
		if err != nil || port == "0" {
			return c, usagef("--config: listen %q names no fixed port to connect to; pass --addr", d.Listen)
		}
		switch host {
		case "", "0.0.0.0":
			host = "127.0.0.1"
		case "::":
			host = "::1"
		}
		c.Addr = net.JoinHostPort(host, port)
	}
	switch {
	case d.AdminKey == "":
		return c, usagef("--config: %s sets no admin_key, so the screen cannot start at the root", file)
	case strings.HasPrefix(d.AdminKey, config.KeyHashPrefix):
		if c.APIKey == "" {
			return c, usagef("--config: %s holds only the admin key's SHA-256; set %s to the admin key", file, clientconn.EnvAPIKey)
		}
	default:
		c.APIKey = d.AdminKey
	}
	if d.TLS.Enabled() && !cmd.Flags().Changed("ca-file") && !cmd.Flags().Changed("tls") {
		c.CAFile = d.TLS.CertFile
	}
	if _, err := c.BaseURL(); err != nil {
		return c, fmt.Errorf("--config: %w", err)
	}
	return c, nil
}

// isTerminal reports whether f is a terminal device.
func isTerminal(f any) bool {
	fd, ok := f.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(fd.Fd())
}

// restoreTerminal leaves the alternate screen and shows the cursor. The
// screen does so itself when it ends normally; this covers every other way
// out, and repeating it is harmless.
func restoreTerminal(w io.Writer) {
	_, _ = io.WriteString(w, "\x1b[?1049l\x1b[?25h")
}
