package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"connectrpc.com/connect"
	"github.com/spf13/cobra"
	"google.golang.org/protobuf/encoding/protojson"

	governorv1 "governor.dev/governor/internal/gen/governor/v1"
	"governor.dev/governor/internal/gen/governor/v1/governorv1connect"
)

// tree is a node and its children, as describe prints it.
type tree struct {
	node     *governorv1.NodeInfo
	children []*tree
}

// MarshalJSON writes {"node": NodeInfo in its JSON form, "children": [...]}.
func (t *tree) MarshalJSON() ([]byte, error) {
	node, err := protojson.Marshal(t.node)
	if err != nil {
		return nil, err
	}
	return json.Marshal(struct {
		Node     json.RawMessage `json:"node"`
		Children []*tree         `json:"children,omitempty"`
	}{node, t.children})
}

func newDescribe(conn *connFlags) *cobra.Command {
	var output string
	var depth int
	cmd := &cobra.Command{
		Use:   "describe [NODE]",
		Short: "Show a node (default: your scope) and its descendants with their use against their caps",
		Long: "NODE is a node id, \".\" for your scope, or a path of child names from your scope such as\n" +
			"team-a/claude:SESSION.",
		Args: args(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			if output != "text" && output != "json" {
				return usagef("-o %q is not an output format; use text or json", output)
			}
			if depth < 0 || depth > 32 {
				return usagef("--depth %d is out of range; use 0 (the node alone) to 32", depth)
			}
			return withSession(cmd, conn, func(ctx context.Context, api governorv1connect.GovernorServiceClient) error {
				id, err := resolve(ctx, api, first(a))
				if err != nil {
					return err
				}
				t, err := load(ctx, api, id, depth)
				if err != nil {
					return err
				}
				if output == "json" {
					enc := json.NewEncoder(cmd.OutOrStdout())
					enc.SetIndent("", "  ")
					return enc.Encode(t)
				}
				printTree(cmd.OutOrStdout(), t, 0)
				return nil
			})
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "text or json")
	cmd.Flags().IntVar(&depth, "depth", 1, "levels of descendants to show: 0 for the node alone")
	return cmd
}

// load reads a node and depth levels of its descendants.
func load(ctx context.Context, api governorv1connect.GovernorServiceClient, id uint64, depth int) (*tree, error) {
	res, err := api.GetNode(ctx, connect.NewRequest(&governorv1.GetNodeRequest{NodeId: id, IncludeChildren: depth > 0}))
	if err != nil {
		return nil, err
	}
	t := &tree{node: res.Msg.GetNode()}
	for _, c := range res.Msg.GetChildren() {
		child := &tree{node: c}
		if depth > 1 && c.GetChildrenCount() > 0 {
			if child, err = load(ctx, api, c.GetId(), depth-1); err != nil {
				return nil, err
			}
		}
		t.children = append(t.children, child)
	}
	return t, nil
}

func printTree(w io.Writer, t *tree, level int) {
	indent := strings.Repeat("  ", level)
	fmt.Fprintln(w, indent+line(t.node))
	if d := defaultsLine(t.node.GetDefaults()); d != "" {
		fmt.Fprintln(w, indent+"  defaults: "+d)
	}
	for _, c := range t.children {
		printTree(w, c, level+1)
	}
}

// withSession runs f with a session opened with the configured key, and
// closes the session after.
func withSession(cmd *cobra.Command, conn *connFlags, f func(context.Context, governorv1connect.GovernorServiceClient) error) error {
	cfg, err := conn.config(cmd)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), callTimeout)
	defer cancel()
	s, err := openSession(ctx, cfg, "governor "+cmd.Name())
	if err != nil {
		return err
	}
	defer s.Close()
	return f(ctx, s.API())
}

func first(a []string) string {
	if len(a) == 0 {
		return ""
	}
	return a[0]
}
