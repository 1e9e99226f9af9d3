package cli

import (
	"context"
	"fmt"
	"strings"

	"connectrpc.com/connect"
	"github.com/spf13/cobra"
	"google.golang.org/protobuf/proto"

	governorv1 "governor.dev/governor/internal/gen/governor/v1"
	"governor.dev/governor/internal/gen/governor/v1/governorv1connect"
)

type defaultsFlags struct {
	quotas, limits, childQuotas, childLimits []string
	clear                                    bool
}

func newDefaults(conn *connFlags) *cobra.Command {
	f := &defaultsFlags{}
	cmd := &cobra.Command{
		Use:   "defaults NODE [--quota NAME=VALUE|none]... [--limit ...] [--child-quota ...] [--child-limit ...] [--clear]",
		Short: "Show or change the caps a node's new children (and their children) start with",
		Long: "Without flags, defaults prints the node's defaults. Each flag sets one default, or removes it\n" +
			"with none; --clear first removes them all. Nodes that exist keep their caps.",
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			edits, err := f.edits()
			if err != nil {
				return err
			}
			return withNode(cmd, conn, a[0], func(ctx context.Context, api governorv1connect.GovernorServiceClient, id uint64) error {
				res, err := api.GetNode(ctx, connect.NewRequest(&governorv1.GetNodeRequest{NodeId: id}))
				if err != nil {
					return err
				}
				d := res.Msg.GetNode().GetDefaults()
				if len(edits) > 0 || f.clear {
					d = applyDefaults(d, f.clear, edits)
					set, err := api.SetDefaults(ctx, connect.NewRequest(&governorv1.SetDefaultsRequest{NodeId: id, Defaults: d}))
					if err != nil {
						return err
					}
					d = set.Msg.GetNode().GetDefaults()
				}
				words := defaultsLine(d)
				if words == "" {
					words = "none: new children take no caps but their own"
				}
				fmt.Fprintf(cmd.OutOrStdout(), "defaults of %s #%d: %s\n", displayName(res.Msg.GetNode()), res.Msg.GetNode().GetId(), words)
				return nil
			})
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&f.quotas, "quota", nil, "NAME=VALUE or NAME=none: a new child's quota")
	fl.StringArrayVar(&f.limits, "limit", nil, "NAME=VALUE or NAME=none: a new child's concurrency limit")
	fl.StringArrayVar(&f.childQuotas, "child-quota", nil, "NAME=VALUE or NAME=none: the quota a new child gives its own children")
	fl.StringArrayVar(&f.childLimits, "child-limit", nil, "NAME=VALUE or NAME=none: the limit a new child gives its own children")
	fl.BoolVar(&f.clear, "clear", false, "remove every default before applying the other flags")
	return cmd
}

// defaultEdit sets (value non-nil) or removes one default.
type defaultEdit struct {
	kind  string // quota, limit, child-quota, child-limit
	name  string
	value *int64
}

func (f *defaultsFlags) edits() ([]defaultEdit, error) {
	var out []defaultEdit
	for _, group := range []struct {
		kind string
		vals []string
	}{{"quota", f.quotas}, {"limit", f.limits}, {"child-quota", f.childQuotas}, {"child-limit", f.childLimits}} {
		for _, v := range group.vals {
			name, raw, ok := strings.Cut(v, "=")
			if !ok || name == "" {
				return nil, usagef("--%s %q is not NAME=VALUE or NAME=none", group.kind, v)
			}
			val, err := capValue(raw)
			if err != nil {
				return nil, usagef("--%s %q: the value is not a whole number of at least 0, or none", group.kind, v)
			}
			out = append(out, defaultEdit{kind: group.kind, name: name, value: val})
		}
	}
	return out, nil
}

// applyDefaults returns d changed by the edits; d itself is left alone.
func applyDefaults(d *governorv1.Defaults, clear bool, edits []defaultEdit) *governorv1.Defaults {
	out := &governorv1.Defaults{}
	if !clear && d != nil {
		out = proto.Clone(d).(*governorv1.Defaults)
	}
	if out.Children == nil {
		out.Children = &governorv1.ChildDefaults{}
	}
	for _, e := range edits {
		var m *map[string]int64
		switch e.kind {
		case "quota":
			m = &out.Quotas
		case "limit":
			m = &out.Limits
		case "child-quota":
			m = &out.Children.Quotas
		default:
			m = &out.Children.Limits
		}
		if e.value == nil {
			delete(*m, e.name)
			continue
		}
		if *m == nil {
			*m = map[string]int64{}
		}
		(*m)[e.name] = *e.value
	}
	return out
}
