package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"

	"governor.dev/governor/cmd/internal/config"
	"governor.dev/governor/cmd/internal/durable"
	"governor.dev/governor/cmd/internal/engine"
)

// The file seeds the record; the record decides afterwards. At every start:
//
//   - each configured tenant is found under the root by name, or created
//     with the file's weight, quotas and limits;
//   - a quota, limit or rate cap the file names is set on the root or a
//     tenant only when the record has no cap of that kind on it; a cap on record (set by the file
//     at an earlier start, changed at run time, or learned by an adaptive
//     controller) is kept, whatever the file says now;
//   - a tenant's defaults are set from the file only when the record holds
//     none for the tenant;
//   - a weight is the file's when the tenant is created; the record keeps
//     it after that;
//   - the root's limit on a class with an adaptive controller is the
//     controller's: it sets the class's initial limit when the record has
//     none, and moves it from then on.
//
// Where the file and the record differ, the record's value stands and the
// difference is logged, so an operator sees why an edit of the file did not
// take effect.

// seeder applies the file to the record with calls of the daemon itself (no
// session) and remembers how far the record must reach.
type seeder struct {
	e   seedCalls
	log *slog.Logger
	seq uint64 // the largest Call.Seq seen
}

// seedCalls are the calls seeding makes: the engine's, or a cluster
// member's, which put them in the log.
type seedCalls interface {
	Ensure(c *engine.Call, parent engine.ID, spec engine.Spec, charge *engine.Charge) (engine.NodeInfo, bool, error)
	SetQuota(c *engine.Call, id engine.ID, resource string, value *int64) error
	SetLimit(c *engine.Call, id engine.ID, class string, value *int64) error
	SetRate(c *engine.Call, id engine.ID, resource string, rate *engine.Rate) error
	SetDefaults(c *engine.Call, id engine.ID, d engine.Defaults) error
	Describe(c *engine.Call, id engine.ID, page *engine.Page) (engine.NodeInfo, []engine.NodeInfo, engine.ID, error)
}

// reconcile seeds the root and the tenants and returns each tenant's node,
// once everything it changed is on record.
func reconcile(ctx context.Context, st *durable.Store, cfg *config.Config, log *slog.Logger) (map[string]engine.ID, error) {
	return seedThrough(ctx, st.Engine, st.Wait, cfg, log)
}

// seedThrough is reconcile through e, waiting with wait until the last change is
// on record.
func seedThrough(ctx context.Context, e seedCalls, wait func(context.Context, uint64) error, cfg *config.Config, log *slog.Logger) (map[string]engine.ID, error) {
	s := &seeder{e: e, log: log}
	if err := s.root(cfg); err != nil {
		return nil, err
	}
	tenants := make(map[string]engine.ID, len(cfg.Tenants))
	for i := range cfg.Tenants {
		id, err := s.tenant(&cfg.Tenants[i])
		if err != nil {
			return nil, err
		}
		tenants[cfg.Tenants[i].Name] = id
	}
	if err := wait(ctx, s.seq); err != nil {
		return nil, fmt.Errorf("record the configuration: %w", err)
	}
	return tenants, nil
}

// root seeds the shared pools. The limit of an adaptive class is left to
// its controller, which starts it from its initial limit when the record has
// none, and records why.
func (s *seeder) root(cfg *config.Config) error {
	limits := maps.Clone(cfg.Root.Limits)
	for class := range cfg.Adaptive {
		delete(limits, class)
	}
	inf, err := s.describe(engine.RootID)
	if err != nil {
		return err
	}
	if err := s.caps(inf, "root", cfg.Root.Quotas, limits); err != nil {
		return err
	}
	return s.rates(inf, "root", cfg.Root.Rates)
}

// tenant finds or creates one tenant and seeds what its record lacks.
func (s *seeder) tenant(t *config.Tenant) (engine.ID, error) {
	rates, err := config.EngineRates(t.Rates)
	if err != nil {
		return 0, fmt.Errorf("tenant %q: %w", t.Name, err)
	}
	c := &engine.Call{}
	spec := engine.Spec{Name: t.Name, Quotas: t.Quotas, Limits: t.Limits, Rates: rates, Weight: int32(t.Weight)}
	inf, created, err := s.e.Ensure(c, engine.RootID, spec, nil)
	s.seq = max(s.seq, c.Seq)
	if err != nil {
		return 0, fmt.Errorf("tenant %q: %w", t.Name, err)
	}
	where := "tenant " + t.Name
	switch {
	case created:
		s.log.Info("tenant created from the configuration", "tenant", t.Name, "node", inf.ID)
	case inf.State != engine.Active:
		s.log.Warn("tenant has ended on record; its key opens sessions on an ended node until the node is removed",
			"tenant", t.Name, "node", inf.ID, "state", inf.State.String())
		return inf.ID, nil
	default:
		if err := s.caps(inf, where, t.Quotas, t.Limits); err != nil {
			return 0, err
		}
		if err := s.rates(inf, where, t.Rates); err != nil {
			return 0, err
		}
		if inf.Weight != int32(t.Weight) {
			s.log.Info("the record keeps the weight the tenant was created with", "tenant", t.Name,
				"record", inf.Weight, "file", t.Weight)
		}
	}
	return inf.ID, s.defaults(inf, where, t.Defaults)
}

// caps sets each quota and limit the file names and the record lacks.
func (s *seeder) caps(inf engine.NodeInfo, where string, quotas, limits map[string]int64) error {
	for _, r := range slices.Sorted(maps.Keys(quotas)) {
		q := inf.Quotas[r]
		if err := s.cap(inf.ID, where+" quota "+r, q.Capped, q.Cap, quotas[r], s.e.SetQuota, r); err != nil {
			return err
		}
	}
	for _, class := range slices.Sorted(maps.Keys(limits)) {
		l := inf.Limits[class]
		if err := s.cap(inf.ID, where+" limit "+class, l.Limited, l.Limit, limits[class], s.e.SetLimit, class); err != nil {
			return err
		}
	}
	return nil
}

// rates sets each rate cap the file names and the record lacks.
func (s *seeder) rates(inf engine.NodeInfo, where string, file map[string]config.Rate) error {
	rates, err := config.EngineRates(file)
	if err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	for _, r := range slices.Sorted(maps.Keys(rates)) {
		if rec, ok := inf.Rates[r]; ok {
			if rec.Rate != rates[r] {
				s.log.Info("the record keeps a rate cap changed since it was seeded", "cap", where+" rate "+r,
					"record", fmt.Sprintf("%+v", rec.Rate), "file", fmt.Sprintf("%+v", rates[r]))
			}
			continue
		}
		c := &engine.Call{}
		rate := rates[r]
		err := s.e.SetRate(c, inf.ID, r, &rate)
		s.seq = max(s.seq, c.Seq)
		if err != nil {
			return fmt.Errorf("seed %s rate %s: %w", where, r, err)
		}
	}
	return nil
}

// setCap is engine.SetQuota or engine.SetLimit.
type setCap func(c *engine.Call, id engine.ID, key string, value *int64) error

func (s *seeder) cap(id engine.ID, what string, onRecord bool, recorded, file int64, set setCap, key string) error {
	if onRecord {
		if recorded != file {
			s.log.Info("the record keeps a cap changed since it was seeded", "cap", what, "record", recorded, "file", file)
		}
		return nil
	}
	c := &engine.Call{}
	err := set(c, id, key, &file)
	s.seq = max(s.seq, c.Seq)
	if err != nil {
		return fmt.Errorf("seed %s: %w", what, err)
	}
	return nil
}

// defaults sets a tenant's defaults from the file when the record has none.
func (s *seeder) defaults(inf engine.NodeInfo, where string, d config.Defaults) error {
	file, err := engineDefaults(d)
	if err != nil {
		return fmt.Errorf("the defaults of %s: %w", where, err)
	}
	switch {
	case emptyDefaults(file):
		return nil
	case !emptyDefaults(inf.Defaults):
		s.log.Debug("the record's defaults stand", "node", where)
		return nil
	}
	c := &engine.Call{}
	err = s.e.SetDefaults(c, inf.ID, file)
	s.seq = max(s.seq, c.Seq)
	if err != nil {
		return fmt.Errorf("seed the defaults of %s: %w", where, err)
	}
	return nil
}

func (s *seeder) describe(id engine.ID) (engine.NodeInfo, error) {
	c := &engine.Call{}
	inf, _, _, err := s.e.Describe(c, id, nil)
	s.seq = max(s.seq, c.Seq)
	if err != nil {
		return inf, fmt.Errorf("describe node %d: %w", id, err)
	}
	return inf, nil
}

// engineDefaults converts the file's defaults; empty children become nil.
func engineDefaults(d config.Defaults) (engine.Defaults, error) {
	rates, err := config.EngineRates(d.Rates)
	if err != nil {
		return engine.Defaults{}, err
	}
	children, err := config.EngineRates(d.Children.Rates)
	if err != nil {
		return engine.Defaults{}, err
	}
	out := engine.Defaults{Caps: engine.Caps{Quotas: d.Quotas, Limits: d.Limits, Rates: rates}}
	if len(d.Children.Quotas) > 0 || len(d.Children.Limits) > 0 || len(children) > 0 {
		out.Children = &engine.Caps{Quotas: d.Children.Quotas, Limits: d.Children.Limits, Rates: children}
	}
	return out, nil
}

func emptyDefaults(d engine.Defaults) bool {
	return emptyCaps(d.Caps) && (d.Children == nil || emptyCaps(*d.Children))
}

func emptyCaps(c engine.Caps) bool {
	return len(c.Quotas) == 0 && len(c.Limits) == 0 && len(c.Rates) == 0
}
