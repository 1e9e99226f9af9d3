package server

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"connectrpc.com/connect"

	"governor.dev/governor/cmd/internal/engine"
	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// TestGetNodeCopiesPagesIntoKeptMemory checks that paging through a node's
// children over the API copies each page into the memory of the one
// before: a client reading a wide node page after page leaves no page's
// copy to the garbage collector (docs/performance.md, "A wide tenant's
// neighbours"). Each page still holds the right children.
func TestGetNodeCopiesPagesIntoKeptMemory(t *testing.T) {
	e := newEnv(t, sqliteURL(t))
	client, sess := e.session(keyB)
	parent, _ := e.wideNode(engine.ID(sess.SessionId), "wide", 2*engine.DefaultPageSize)
	var kept *engine.NodeInfo         // the first slot of the page memory kept after the first page
	var keptWire *governorv1.NodeInfo // the same for the answer's children
	for i, cursor := 0, uint64(0); i < 2; i++ {
		res, err := client.GetNode(context.Background(), connect.NewRequest(&governorv1.GetNodeRequest{
			NodeId: uint64(parent), IncludeChildren: true, Cursor: cursor,
		}))
		if err != nil {
			t.Fatal(err)
		}
		kids := res.Msg.Children
		if want := fmt.Sprint("c", i*engine.DefaultPageSize); len(kids) != engine.DefaultPageSize || kids[0].Name != want {
			t.Fatalf("page %d: %d children from %q; want %d from %q", i, len(kids), kids[0].GetName(), engine.DefaultPageSize, want)
		}
		cursor = res.Msg.NextCursor
		page := e.srv.pages.take()
		if cap(page) < engine.DefaultPageSize {
			t.Fatalf("after page %d the server keeps memory for %d children; want room for a page", i, cap(page))
		}
		if first := page[:1][0]; first.Name != "" {
			t.Fatalf("after page %d the memory kept still holds %q; want it cleared", i, first.Name)
		}
		if i == 1 && &page[:1][0] != kept {
			t.Fatal("the second page was copied into memory of its own; want the memory of the first")
		}
		kept = &page[:1][0]
		e.srv.pages.keep(page)
		wire := e.srv.wires.take()
		if wire == nil {
			t.Fatalf("after page %d the server keeps no memory for an answer's children", i)
		}
		if cap(wire.infos) < engine.DefaultPageSize || len(wire.list) != 0 || len(wire.stamps) != 0 {
			t.Fatalf("after page %d the answer's memory kept has room for %d children and still lists %d children and %d times; want room for a page, emptied",
				i, cap(wire.infos), len(wire.list), len(wire.stamps))
		}
		if wire.infos[0].Name != "" || wire.infos[0].CreatedAt != nil {
			t.Fatalf("after page %d the answer's memory kept still describes %q", i, wire.infos[0].Name)
		}
		if i == 1 && &wire.infos[0] != keptWire {
			t.Fatal("the second answer's children were described in memory of their own; want the memory of the first")
		}
		keptWire = &wire.infos[0]
		e.srv.wires.keep(wire)
	}
}

// TestConcurrentAnswersEachHaveTheirPage pages through a node of 3,000
// children from more clients at once than the shelf keeps pages for, 100
// children a page, each page checked child by child: an answer's page goes
// back to the shelf only once the answer is written, so no answer is
// described over while it is sent (the race detector and the checks both
// fail when the page goes back as GetNode returns).
func TestConcurrentAnswersEachHaveTheirPage(t *testing.T) {
	e := newEnv(t, "")
	client, sess := e.session(keyB)
	const kids, size = 3000, 100
	parent, ids := e.wideNode(engine.ID(sess.SessionId), "wide", kids)
	var wg sync.WaitGroup
	for range 2 * shelfPages {
		wg.Go(func() {
			read := 0
			if err := eachPage(context.Background(), client, uint64(parent), size, func(page []*governorv1.NodeInfo) error {
				for _, k := range page {
					if read >= kids || k.Id != ids[read] || k.Name != fmt.Sprint("c", read) || k.ParentId != uint64(parent) || k.CreatedAt == nil || k.Tenant != "b" {
						return fmt.Errorf("child %d of the node came as %v", read, k)
					}
					read++
				}
				return nil
			}); err != nil {
				t.Error(err)
				return
			}
			if read != kids {
				t.Errorf("the pages held %d children, want %d", read, kids)
			}
		})
	}
	wg.Wait()
}

// TestPageShelfKeepsAFew checks that the shelf keeps at most shelfPages
// pages, so that a burst of GetNode calls does not keep its memory for
// ever, and hands back what it kept.
func TestPageShelfKeepsAFew(t *testing.T) {
	var p shelf[[]engine.NodeInfo]
	for range shelfPages + 2 {
		p.keep(make([]engine.NodeInfo, 0, 8))
	}
	for i := range shelfPages {
		if page := p.take(); cap(page) != 8 || len(page) != 0 {
			t.Fatalf("take %d: a page of length %d and room %d; want an empty one with room for 8", i, len(page), cap(page))
		}
	}
	if page := p.take(); page != nil {
		t.Fatalf("the shelf kept more than %d pages", shelfPages)
	}
}

// TestChildrenNameEachTheirTenant describes the root's children, the
// tenants, to the admin: each child of the page names its own tenant,
// although a page looks a tenant's name up once for a run of children of
// the same tenant.
func TestChildrenNameEachTheirTenant(t *testing.T) {
	e := newEnv(t, "")
	admin, _ := e.session(adminKey)
	res, err := admin.GetNode(context.Background(), connect.NewRequest(&governorv1.GetNodeRequest{NodeId: uint64(engine.RootID), IncludeChildren: true}))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Msg.Children) < 2 {
		t.Fatalf("the root has %d children, want the tenants a and b", len(res.Msg.Children))
	}
	for _, k := range res.Msg.Children {
		if k.Tenant != k.Name {
			t.Errorf("tenant %q is described as a node of tenant %q", k.Name, k.Tenant)
		}
	}
}
