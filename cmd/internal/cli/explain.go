package cli

import (
	"context"
	"fmt"

	"connectrpc.com/connect"
	"github.com/spf13/cobra"
	"google.golang.org/protobuf/encoding/protojson"

	"governor.dev/governor/cmd/internal/explaintext"
	governorv1 "governor.dev/governor/internal/gen/governor/v1"
	"governor.dev/governor/internal/gen/governor/v1/governorv1connect"
)

func newExplain(conn *connFlags) *cobra.Command {
	var output string
	var amount int64
	cmd := &cobra.Command{
		Use:   "explain NODE [RESOURCE|CLASS]",
		Short: "Say why a node cannot have more of a resource or one more lease of a class now, and when it could",
		Long: "Lists every cap on the node's chain that binds now (not only the first), who holds the slots of a\n" +
			"full limit, where the node's queued acquires stand, and an estimate of when it could go ahead.\n" +
			"Without RESOURCE|CLASS, every resource and class the node itself carries is explained.\n" +
			"NODE is a node id, \".\" for your scope, or a path of child names from your scope.",
		Args: args(cobra.RangeArgs(1, 2)),
		RunE: func(cmd *cobra.Command, a []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			if amount < 0 {
				return usagef("--amount %d is negative; use 1 or more (0 means 1)", amount)
			}
			return withNode(cmd, conn, a[0], func(ctx context.Context, api governorv1connect.GovernorServiceClient, id uint64) error {
				names := a[1:]
				if len(names) == 0 {
					var err error
					if names, err = namesOn(ctx, api, id); err != nil {
						return err
					}
				}
				for _, name := range names {
					res, err := api.Explain(ctx, connect.NewRequest(&governorv1.ExplainRequest{NodeId: id, Name: name, Amount: amount}))
					if err != nil {
						return err
					}
					if err := printExplanation(cmd, output, res.Msg); err != nil {
						return err
					}
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "text or json (one JSON object a line)")
	cmd.Flags().Int64Var(&amount, "amount", 1, "units of the resource to explain for")
	return cmd
}

// namesOn is every resource and class node id carries, sorted.
func namesOn(ctx context.Context, api governorv1connect.GovernorServiceClient, id uint64) ([]string, error) {
	res, err := api.GetNode(ctx, connect.NewRequest(&governorv1.GetNodeRequest{NodeId: id}))
	if err != nil {
		return nil, err
	}
	n := res.Msg.GetNode()
	names := explaintext.Names(n)
	if len(names) == 0 {
		return nil, usagef("node %q carries no resource or class; name one: governor explain NODE RESOURCE|CLASS", n.GetName())
	}
	return names, nil
}

func printExplanation(cmd *cobra.Command, output string, x *governorv1.ExplainResponse) error {
	w := cmd.OutOrStdout()
	if output == "json" {
		b, err := protojson.Marshal(x)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(w, string(b))
		return err
	}
	for _, l := range explaintext.Lines(x) {
		if _, err := fmt.Fprintln(w, l); err != nil {
			return err
		}
	}
	return nil
}
