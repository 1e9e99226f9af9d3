package server

import (
	"context"
	"net/http"
	"sync"

	"google.golang.org/protobuf/types/known/timestamppb"

	"governor.dev/governor/cmd/internal/engine"
	governorv1 "governor.dev/governor/internal/gen/governor/v1"
	"governor.dev/governor/internal/gen/governor/v1/governorv1connect"
)

// shelfPages is how many pages of children a shelf keeps: one for each
// GetNode with children answering at once, beyond which a GetNode makes
// its page's memory.
const shelfPages = 4

// shelf keeps the memory of a few pages of children for the next GetNode:
// a client paging through a wide node then leaves no page for the garbage
// collector, whose cycles other tenants' calls wait behind
// (docs/performance.md, "A wide tenant's neighbours"). GetNode copies its
// page from the engine into one (engine.Page.Into) and describes it on the
// wire in another (wirePage). The zero value is an empty shelf; it is safe
// for concurrent use.
type shelf[T any] struct {
	mu   sync.Mutex // guards kept
	kept []T
}

// take returns a kept page's memory, or the zero T when none is kept.
func (p *shelf[T]) take() T {
	p.mu.Lock()
	defer p.mu.Unlock()
	var page T
	if n := len(p.kept); n > 0 {
		page, p.kept[n-1] = p.kept[n-1], page
		p.kept = p.kept[:n-1]
	}
	return page
}

// keep keeps page, which nothing refers to any more, unless the shelf is
// full.
func (p *shelf[T]) keep(page T) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.kept) < shelfPages {
		p.kept = append(p.kept, page)
	}
}

// giveEngine keeps the memory of kids, an engine page the caller is done
// with, once it has been cleared of what it pointed to.
func (s *Server) giveEngine(kids []engine.NodeInfo) {
	if cap(kids) > 0 {
		clear(kids)
		s.pages.keep(kids[:0])
	}
}

// wirePage is the memory of one GetNode answer's children: the messages,
// their times, and the list of them the answer holds.
type wirePage struct {
	infos  []governorv1.NodeInfo
	stamps []timestamppb.Timestamp
	list   []*governorv1.NodeInfo
}

// describe fills the page with kids as the wire describes them, and returns
// the list of them.
func (w *wirePage) describe(s *Server, kids []engine.NodeInfo) []*governorv1.NodeInfo {
	if cap(w.infos) < len(kids) {
		w.infos = make([]governorv1.NodeInfo, len(kids))
		w.stamps = make([]timestamppb.Timestamp, 0, 3*len(kids)) // created, ended, deadline
		w.list = make([]*governorv1.NodeInfo, 0, len(kids))
	}
	tenant, name := engine.ID(0), "" // children of one node share a tenant: its name is looked up once
	for i, k := range kids {
		if i == 0 || k.Tenant != tenant {
			tenant, name = k.Tenant, s.tenantName(k)
		}
		fillNodeInfo(&w.infos[i], k, name, w.stamp)
		w.list = append(w.list, &w.infos[i])
	}
	return w.list
}

// stamp is stamp in the page's memory.
func (w *wirePage) stamp(ns int64) *timestamppb.Timestamp {
	if ns == 0 {
		return nil
	}
	w.stamps = append(w.stamps, timestamppb.Timestamp{})
	return setStamp(&w.stamps[len(w.stamps)-1], ns)
}

// clear empties the page of what it pointed to, keeping its memory.
func (w *wirePage) clear() {
	clear(w.infos)
	clear(w.stamps)
	clear(w.list)
	w.stamps, w.list = w.stamps[:0], w.list[:0]
}

// pageLoan is where GetNode leaves the wire page its answer holds, for
// lendingPages to keep once the answer is written.
type pageLoan struct{ page *wirePage }

type pageLoanKey struct{}

// lendingPages serves h, GovernorService, lending GetNode a wire page for
// its answer's children from the shelf, and keeping it again once the
// answer is written: a unary answer is marshalled and written before its
// handler returns, and nothing refers to its messages after.
func (s *Server) lendingPages(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != governorv1connect.GovernorServiceGetNodeProcedure {
			h.ServeHTTP(w, r)
			return
		}
		loan := &pageLoan{}
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), pageLoanKey{}, loan)))
		if loan.page != nil {
			loan.page.clear()
			s.wires.keep(loan.page)
		}
	})
}

// wireChildren describes kids on the wire for ctx's GetNode answer: in a
// page lent by lendingPages when ctx carries a loan, or in memory of their
// own.
func (s *Server) wireChildren(ctx context.Context, kids []engine.NodeInfo) []*governorv1.NodeInfo {
	page := &wirePage{}
	if loan, ok := ctx.Value(pageLoanKey{}).(*pageLoan); ok {
		if kept := s.wires.take(); kept != nil {
			page = kept
		}
		loan.page = page
	}
	return page.describe(s, kids)
}
