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

// tree is a node and a page of its children, as describe prints it.
type tree struct {
	node     *governorv1.NodeInfo
	children []*tree
	next     uint64 // the cursor of the next page of children; 0: none
}

// MarshalJSON writes {"node": NodeInfo in its JSON form, "children": [...],
// "next_cursor": N}, the cursor only when more children follow.
func (t *tree) MarshalJSON() ([]byte, error) {
	node, err := protojson.Marshal(t.node)
	if err != nil {
		return nil, err
	}
	return json.Marshal(struct {
		Node     json.RawMessage `json:"node"`
		Children []*tree         `json:"children,omitempty"`
		Next     uint64          `json:"next_cursor,omitempty"`
	}{node, t.children, t.next})
}

// page selects which children describe reads: the node's from cursor on,
// every other level's from its first; size of them at each level.
type page struct {
	size   uint32
	cursor uint64
}

func newDescribe(conn *connFlags) *cobra.Command {
	var output string
	var depth int
	var pg page
	cmd := &cobra.Command{
		Use:   "describe [NODE]",
		Short: "Show a node (default: your scope) and its descendants with their use against their caps",
		Long: "NODE is a node id, \".\" for your scope, or a path of child names from your scope such as\n" +
			"team-a/claude:SESSION. Children are shown a page at a time, in id order; when more follow,\n" +
			"the last line gives the --cursor that shows the next page.",
		Args: args(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			if depth < 0 || depth > 32 {
				return usagef("--depth %d is out of range; use 0 (the node alone) to 32", depth)
			}
			return withNode(cmd, conn, first(a), func(ctx context.Context, api governorv1connect.GovernorServiceClient, id uint64) error {
				t, err := load(ctx, api, id, depth, pg)
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
	cmd.Flags().Uint32Var(&pg.size, "page-size", 0, "children shown per node: 0 for governord's default (1000), at most 5000")
	cmd.Flags().Uint64Var(&pg.cursor, "cursor", 0, "show the node's children after this cursor, as a previous page's last line gives it")
	return cmd
}

// load reads a node and depth levels of its descendants, a page of children
// at each level.
func load(ctx context.Context, api governorv1connect.GovernorServiceClient, id uint64, depth int, pg page) (*tree, error) {
	req := &governorv1.GetNodeRequest{NodeId: id, IncludeChildren: depth > 0, PageSize: pg.size, Cursor: pg.cursor}
	res, err := api.GetNode(ctx, connect.NewRequest(req))
	if err != nil {
		return nil, err
	}
	t := &tree{node: res.Msg.GetNode(), next: res.Msg.GetNextCursor()}
	for _, c := range res.Msg.GetChildren() {
		child := &tree{node: c}
		if depth > 1 && c.GetChildrenCount() > 0 {
			if child, err = load(ctx, api, c.GetId(), depth-1, page{size: pg.size}); err != nil {
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
	if t.next != 0 {
		fmt.Fprintf(w, "%s  … more of its %d children: --cursor %d\n", indent, t.node.GetChildrenCount(), t.next)
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
