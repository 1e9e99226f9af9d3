package server

import (
	"context"
	"fmt"
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
	c := &engine.Call{Session: engine.ID(sess.SessionId)}
	eng := e.store.Engine
	parent, err := eng.Create(c, 0, engine.Spec{Name: "wide"})
	for i := 0; i < 2*engine.DefaultPageSize && err == nil; i++ {
		_, err = eng.Create(c, parent.ID, engine.Spec{Name: fmt.Sprint("c", i)})
	}
	if err == nil {
		err = e.store.Wait(context.Background(), c.Seq)
	}
	if err != nil {
		t.Fatal(err)
	}
	var kept *engine.NodeInfo // the first slot of the page memory kept after the first page
	for i, cursor := 0, uint64(0); i < 2; i++ {
		res, err := client.GetNode(context.Background(), connect.NewRequest(&governorv1.GetNodeRequest{
			NodeId: uint64(parent.ID), IncludeChildren: true, Cursor: cursor,
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
		e.srv.pages.give(page)
	}
}

// TestPageShelfKeepsAFew checks that the shelf keeps at most shelfPages
// pages, so that a burst of GetNode calls does not keep its memory for
// ever, and hands back what it kept.
func TestPageShelfKeepsAFew(t *testing.T) {
	var p pageShelf
	for range shelfPages + 2 {
		p.give(make([]engine.NodeInfo, 1, 8))
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
