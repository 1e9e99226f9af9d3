package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"connectrpc.com/connect"
	"github.com/spf13/cobra"

	"governor.dev/governor/internal/clientconn"
	governorv1 "governor.dev/governor/internal/gen/governor/v1"
	"governor.dev/governor/internal/gen/governor/v1/governorv1connect"
)

// peerTimeout bounds how long `cluster status` waits for each other
// member's own indices.
const peerTimeout = 2 * time.Second

// newCluster is `governor cluster`: the membership of a replicated
// governord, with the admin key.
func newCluster(conn *connFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "Show and change a cluster's members (the admin key)",
		Long: "The members of a governord cluster, with the admin key in GOVERNOR_API_KEY.\n" +
			"Changes go to the leader: give any member in --addr or GOVERNOR_ADDR and the\n" +
			"call follows the leader it names.",
	}
	cmd.AddCommand(newClusterStatus(conn), newClusterAdd(conn), newClusterRemove(conn), newClusterTransfer(conn))
	return cmd
}

// withKey runs f with a client whose calls carry the key itself, as the
// cluster calls want (a session token is refused), and the connection
// settings.
func withKey(cmd *cobra.Command, conn *connFlags, f func(context.Context, governorv1connect.GovernorServiceClient, clientconn.Config) error) error {
	cfg, err := conn.config(cmd)
	if err != nil {
		return err
	}
	key, cfg, err := keyAPI(cfg)
	if err != nil {
		return err
	}
	defer cfg.HTTPClient.CloseIdleConnections()
	return f(cmd.Context(), key, cfg)
}

func newClusterStatus(conn *connFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "List the members: addresses, votes, the leader, and each one's log indices",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withKey(cmd, conn, func(ctx context.Context, key governorv1connect.GovernorServiceClient, cfg clientconn.Config) error {
				res, err := key.ClusterStatus(ctx, connect.NewRequest(&governorv1.ClusterStatusRequest{}))
				if err != nil {
					return err
				}
				st := res.Msg
				for _, m := range st.GetMembers() {
					if !m.GetSelf() && m.GetApiAddress() != "" {
						fillIndices(ctx, cfg, m)
					}
				}
				return printStatus(cmd.OutOrStdout(), st)
			})
		},
	}
}

// fillIndices asks member m itself for its log indices; they stay unknown
// (0) when it does not answer within peerTimeout.
func fillIndices(ctx context.Context, cfg clientconn.Config, m *governorv1.ClusterMember) {
	cfg.Addr, cfg.HTTPClient = m.GetApiAddress(), nil
	key, cfg, err := keyAPI(cfg)
	if err != nil {
		return
	}
	defer cfg.HTTPClient.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(ctx, peerTimeout)
	defer cancel()
	res, err := key.ClusterStatus(ctx, connect.NewRequest(&governorv1.ClusterStatusRequest{}))
	if err != nil {
		return
	}
	for _, own := range res.Msg.GetMembers() {
		if own.GetSelf() && own.GetId() == m.GetId() {
			m.LastIndex, m.AppliedIndex = own.GetLastIndex(), own.GetAppliedIndex()
		}
	}
}

// printStatus writes the cluster's summary and a table of its members.
func printStatus(w io.Writer, st *governorv1.ClusterStatusResponse) error {
	leader := st.GetLeaderId()
	if leader == "" {
		leader = "none known"
	}
	fmt.Fprintf(w, "asked %s (%s): term %d, leader %s, committed %d\n",
		st.GetId(), st.GetState(), st.GetTerm(), leader, st.GetCommitIndex())
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tRAFT\tAPI\tSUFFRAGE\tROLE\tLAST\tAPPLIED")
	for _, m := range st.GetMembers() {
		role := "follower"
		if m.GetLeader() {
			role = "leader"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", m.GetId(), m.GetRaftAddress(), orDash(m.GetApiAddress()),
			m.GetSuffrage(), role, index(m.GetLastIndex()), index(m.GetAppliedIndex()))
	}
	return tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// index prints a log index, "-" when unknown.
func index(i uint64) string {
	if i == 0 {
		return "-"
	}
	return strconv.FormatUint(i, 10)
}

func newClusterAdd(conn *connFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "add ID RAFT_ADDRESS API_ADDRESS",
		Short: "Add a voting member, once its governord runs with a cluster section naming it",
		Args:  args(cobra.ExactArgs(3)),
		RunE: func(cmd *cobra.Command, a []string) error {
			return withKey(cmd, conn, func(ctx context.Context, key governorv1connect.GovernorServiceClient, _ clientconn.Config) error {
				res, err := key.AddMember(ctx, connect.NewRequest(&governorv1.AddMemberRequest{Id: a[0], RaftAddress: a[1], ApiAddress: a[2]}))
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "added %s (raft %s, API %s); configuration at index %d\n", a[0], a[1], a[2], res.Msg.GetConfigurationIndex())
				return nil
			})
		},
	}
}

func newClusterRemove(conn *connFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "remove ID",
		Short: "Remove a member; to remove the leader, transfer the leadership first",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			return withKey(cmd, conn, func(ctx context.Context, key governorv1connect.GovernorServiceClient, _ clientconn.Config) error {
				res, err := key.RemoveMember(ctx, connect.NewRequest(&governorv1.RemoveMemberRequest{Id: a[0]}))
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "removed %s; configuration at index %d\n", a[0], res.Msg.GetConfigurationIndex())
				return nil
			})
		},
	}
}

func newClusterTransfer(conn *connFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "transfer [ID]",
		Short: "Hand the leadership to member ID, or to the most up-to-date voter",
		Args:  args(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			to := ""
			if len(a) == 1 {
				to = a[0]
			}
			return withKey(cmd, conn, func(ctx context.Context, key governorv1connect.GovernorServiceClient, _ clientconn.Config) error {
				res, err := key.TransferLeadership(ctx, connect.NewRequest(&governorv1.TransferLeadershipRequest{Id: to}))
				if err != nil {
					return err
				}
				if res.Msg.GetLeaderId() == "" {
					fmt.Fprintln(cmd.OutOrStdout(), "leadership handed over; the new leader is not known yet")
					return nil
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s leads now, API at %s\n", res.Msg.GetLeaderId(), orDash(res.Msg.GetLeaderApiAddress()))
				return nil
			})
		},
	}
}
