package cli

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"connectrpc.com/connect"
	"github.com/spf13/cobra"

	governorv1 "governor.dev/governor/internal/gen/governor/v1"
	"governor.dev/governor/internal/gen/governor/v1/governorv1connect"
)

func newSet(conn *connFlags) *cobra.Command {
	set := &cobra.Command{
		Use:   "set quota|limit NODE NAME VALUE|none",
		Short: "Set or remove a node's quota on a resource, limit on a concurrency class, or rate cap (set rate)",
		Args:  args(cobra.ExactArgs(4)),
		RunE: func(cmd *cobra.Command, a []string) error {
			kind, name := a[0], a[2]
			if kind != "quota" && kind != "limit" {
				return usagef("%q is not something set changes; use quota, limit or rate", kind)
			}
			value, err := capValue(a[3])
			if err != nil {
				return err
			}
			return withNode(cmd, conn, a[1], func(ctx context.Context, api governorv1connect.GovernorServiceClient, id uint64) error {
				var node *governorv1.NodeInfo
				if kind == "quota" {
					res, err := api.SetQuota(ctx, connect.NewRequest(&governorv1.SetQuotaRequest{NodeId: id, Resource: name, Value: value}))
					if err != nil {
						return err
					}
					node = res.Msg.GetNode()
				} else {
					res, err := api.SetLimit(ctx, connect.NewRequest(&governorv1.SetLimitRequest{NodeId: id, Class: name, Value: value}))
					if err != nil {
						return err
					}
					node = res.Msg.GetNode()
				}
				fmt.Fprintln(cmd.OutOrStdout(), line(node))
				return nil
			})
		},
	}
	set.AddCommand(newSetRate(conn))
	return set
}

// capValue reads VALUE|none: a cap of at least 0, or nil to remove it.
func capValue(s string) (*int64, error) {
	if s == "none" {
		return nil, nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 0 {
		return nil, usagef("value %q is not a cap; use a whole number of at least 0, or none to remove the cap", s)
	}
	return &v, nil
}

func newCancel(conn *connFlags) *cobra.Command {
	var reason string
	cmd := &cobra.Command{
		Use:   "cancel NODE",
		Short: "Cancel a node and everything under it; later calls on it are refused",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			if len(reason) > 1024 {
				return usagef("--reason is %d bytes; it may be at most 1024", len(reason))
			}
			return withNode(cmd, conn, a[0], func(ctx context.Context, api governorv1connect.GovernorServiceClient, id uint64) error {
				if id == 0 {
					return usagef("NODE names your scope, which you may not cancel; name a node inside it")
				}
				res, err := api.CancelNode(ctx, connect.NewRequest(&governorv1.CancelNodeRequest{NodeId: id, Reason: reason}))
				if err != nil {
					return err
				}
				fmt.Fprintln(cmd.OutOrStdout(), line(res.Msg.GetNode()))
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "cancelled with governor cancel", "why, for governord's log")
	return cmd
}

func newConsume(conn *connFlags) *cobra.Command {
	var requestID string
	cmd := &cobra.Command{
		Use:   "consume NODE RESOURCE N",
		Short: "Spend N units of a resource on a node and its ancestors; exit 1 if a cap refuses",
		Args:  args(cobra.ExactArgs(3)),
		RunE: func(cmd *cobra.Command, a []string) error {
			n, err := strconv.ParseInt(a[2], 10, 64)
			if err != nil || n < 1 {
				return usagef("N %q is not an amount; use a whole number of at least 1", a[2])
			}
			if len(requestID) > 256 {
				return usagef("--request-id is %d bytes; it may be at most 256", len(requestID))
			}
			cfg, err := conn.config(cmd)
			if err != nil {
				return err
			}
			key, cfg, err := keyAPI(cfg) // the charge goes through the key's durable principal, as the hook's does
			if err != nil {
				return err
			}
			defer cfg.HTTPClient.CloseIdleConnections()
			return withNode(cmd, conn, a[0], func(ctx context.Context, api governorv1connect.GovernorServiceClient, id uint64) error {
				res, err := key.Consume(ctx, connect.NewRequest(&governorv1.ConsumeRequest{NodeId: id, Resource: a[1], Amount: n, RequestId: requestID}))
				if isMismatch(err) {
					return errors.Join(errRefused, err)
				}
				if err != nil {
					return err
				}
				if res.Msg.Remaining != nil {
					fmt.Fprintf(cmd.OutOrStdout(), "consumed %d %s; %d left on the tightest cap\n", n, a[1], res.Msg.GetRemaining())
				} else {
					fmt.Fprintf(cmd.OutOrStdout(), "consumed %d %s; no cap on it\n", n, a[1])
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&requestID, "request-id", "", "makes a repeated consume a no-op, from any process with the same key; at most 256 bytes")
	return cmd
}

func newValidate(conn *connFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "validate LEASE",
		Short: "Say whether a lease is held: exit 0 if it is, 1 if not",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			id, err := strconv.ParseUint(a[0], 10, 63)
			if err != nil || id == 0 {
				return usagef("LEASE %q is not a lease id; use the whole number Acquire returned", a[0])
			}
			return withSession(cmd, conn, func(ctx context.Context, api governorv1connect.GovernorServiceClient) error {
				res, err := api.Validate(ctx, connect.NewRequest(&governorv1.ValidateRequest{LeaseId: id}))
				if err != nil {
					return err
				}
				m := res.Msg
				state := leaseStates[m.GetState()]
				if m.GetValid() {
					fmt.Fprintf(cmd.OutOrStdout(), "lease %d is held (node #%d, class %s)\n", id, m.GetLease().GetNodeId(), m.GetLease().GetClass())
					return nil
				}
				if m.GetReason() != "" {
					fmt.Fprintln(cmd.OutOrStdout(), m.GetReason())
				} else {
					fmt.Fprintf(cmd.OutOrStdout(), "lease %d is %s\n", id, state)
				}
				return errShown
			})
		},
	}
}

var leaseStates = map[governorv1.LeaseState]string{
	governorv1.LeaseState_LEASE_STATE_HELD:     "held",
	governorv1.LeaseState_LEASE_STATE_RELEASED: "released",
	governorv1.LeaseState_LEASE_STATE_EXPIRED:  "expired",
	governorv1.LeaseState_LEASE_STATE_REVOKED:  "revoked",
	governorv1.LeaseState_LEASE_STATE_UNKNOWN:  "unknown",
}
