package cli

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"connectrpc.com/connect"
	"github.com/spf13/cobra"
	"google.golang.org/protobuf/types/known/durationpb"

	governorv1 "governor.dev/governor/internal/gen/governor/v1"
	"governor.dev/governor/internal/gen/governor/v1/governorv1connect"
)

// calendarUnits are the words `set rate` takes for a window that ends with
// a calendar unit.
var calendarUnits = map[string]governorv1.CalendarUnit{
	"minute": governorv1.CalendarUnit_CALENDAR_UNIT_MINUTE,
	"hour":   governorv1.CalendarUnit_CALENDAR_UNIT_HOUR,
	"day":    governorv1.CalendarUnit_CALENDAR_UNIT_DAY,
	"week":   governorv1.CalendarUnit_CALENDAR_UNIT_WEEK,
	"month":  governorv1.CalendarUnit_CALENDAR_UNIT_MONTH,
}

// rateFlags are the parts of a rate cap beyond LIMIT/PERIOD.
type rateFlags struct {
	leaky bool
	burst int64
	zone  string
}

// newSetRate is `governor set rate`: the rate caps that until now only the
// SDK and the API could set.
func newSetRate(conn *connFlags) *cobra.Command {
	var f rateFlags
	cmd := &cobra.Command{
		Use:   "rate NODE RESOURCE LIMIT/PERIOD|none",
		Short: "Set or remove a node's rate cap on a resource",
		Long: "LIMIT/PERIOD is units per period: 100/1m, 5/1s, or per calendar unit with\n" +
			"minute, hour, day, week or month (10000/day, in UTC or --zone). A token bucket\n" +
			"unless --leaky; --burst sets a leaky bucket's capacity. none removes the cap.",
		Args: args(cobra.ExactArgs(3)),
		RunE: func(cmd *cobra.Command, a []string) error {
			rate, err := parseRate(a[2], f)
			if err != nil {
				return err
			}
			return withNode(cmd, conn, a[0], func(ctx context.Context, api governorv1connect.GovernorServiceClient, id uint64) error {
				res, err := api.SetRate(ctx, connect.NewRequest(&governorv1.SetRateRequest{NodeId: id, Resource: a[1], Rate: rate}))
				if err != nil {
					return err
				}
				fmt.Fprintln(cmd.OutOrStdout(), line(res.Msg.GetNode()))
				fmt.Fprintln(cmd.OutOrStdout(), rateLine(a[1], res.Msg.GetNode().GetRates()[a[1]]))
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&f.leaky, "leaky", false, "a leaky bucket: admits LIMIT per PERIOD evenly, up to --burst at once")
	cmd.Flags().Int64Var(&f.burst, "burst", 0, "a leaky bucket's capacity; 0 is LIMIT")
	cmd.Flags().StringVar(&f.zone, "zone", "", "the IANA time zone of a calendar unit, such as Europe/Paris; empty is UTC")
	return cmd
}

// parseRate reads LIMIT/PERIOD|none with the flags into a Rate, nil for
// none. governord checks the ranges; this checks the shape.
func parseRate(s string, f rateFlags) (*governorv1.Rate, error) {
	if s == "none" {
		if f.leaky || f.burst != 0 || f.zone != "" {
			return nil, usagef("none removes the rate cap; --leaky, --burst and --zone go with LIMIT/PERIOD")
		}
		return nil, nil
	}
	limitText, period, ok := strings.Cut(s, "/")
	limit, err := strconv.ParseInt(limitText, 10, 64)
	if !ok || err != nil || limit < 1 {
		return nil, usagef("rate %q is not LIMIT/PERIOD; use a whole number of at least 1, a slash and a period, such as 100/1m or 10000/day", s)
	}
	r := &governorv1.Rate{Limit: limit, Zone: f.zone}
	if unit, ok := calendarUnits[period]; ok {
		r.Calendar = unit
	} else {
		d, err := time.ParseDuration(period)
		if err != nil || d <= 0 {
			return nil, usagef("period %q is neither a duration such as 1m or 1s nor one of minute, hour, day, week, month", period)
		}
		if f.zone != "" {
			return nil, usagef("--zone goes with a calendar unit (minute, hour, day, week, month), not with a period of %s", period)
		}
		r.Period = durationpb.New(d)
	}
	r.Algorithm = governorv1.RateAlgorithm_RATE_ALGORITHM_TOKEN_BUCKET
	switch {
	case f.leaky && r.Calendar != governorv1.CalendarUnit_CALENDAR_UNIT_UNSPECIFIED:
		return nil, usagef("a leaky bucket drains over a period such as 1m, not a calendar unit")
	case f.leaky:
		r.Algorithm, r.Burst = governorv1.RateAlgorithm_RATE_ALGORITHM_LEAKY_BUCKET, f.burst
	case f.burst != 0:
		return nil, usagef("--burst is a leaky bucket's capacity; add --leaky")
	}
	return r, nil
}

// rateLine describes a node's rate cap on resource after a change.
func rateLine(resource string, u *governorv1.RateUsage) string {
	r := u.GetRate()
	if r == nil {
		return fmt.Sprintf("no rate cap on %s", resource)
	}
	per := r.GetPeriod().AsDuration().String()
	if r.GetCalendar() != governorv1.CalendarUnit_CALENDAR_UNIT_UNSPECIFIED {
		per = strings.ToLower(strings.TrimPrefix(r.GetCalendar().String(), "CALENDAR_UNIT_"))
		if r.GetZone() != "" {
			per += " in " + r.GetZone()
		}
	}
	kind := "token bucket"
	if r.GetAlgorithm() == governorv1.RateAlgorithm_RATE_ALGORITHM_LEAKY_BUCKET {
		kind = fmt.Sprintf("leaky bucket, burst %d", max(r.GetBurst(), r.GetLimit()))
	}
	return fmt.Sprintf("rate cap on %s: %d per %s (%s), %d admitted now", resource, r.GetLimit(), per, kind, u.GetRemaining())
}
