package server

import (
	"sync"

	"governor.dev/governor/cmd/internal/engine"
)

// shelfPages is how many pages of children a pageShelf keeps: one for each
// GetNode with children answering at once, beyond which a GetNode has the
// engine make its page.
const shelfPages = 4

// pageShelf keeps the memory GetNode copied pages of children into, for the
// next GetNode to copy its page into (engine.Page.Into): a client paging
// through a wide node then leaves no page's copy for the garbage collector,
// whose cycles other tenants' calls wait behind (docs/performance.md, "A
// wide tenant's neighbours"). The zero value is an empty shelf; it is safe
// for concurrent use.
type pageShelf struct {
	mu   sync.Mutex          // guards kept
	kept [][]engine.NodeInfo // empty, with room for a page or more
}

// take returns a kept page's memory, or nil when none is kept.
func (p *pageShelf) take() []engine.NodeInfo {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.kept) == 0 {
		return nil
	}
	page := p.kept[len(p.kept)-1]
	p.kept = p.kept[:len(p.kept)-1]
	return page
}

// give keeps the memory of kids, a page the caller is done with, once it
// has been cleared of what it pointed to; a full shelf lets it go.
func (p *pageShelf) give(kids []engine.NodeInfo) {
	if cap(kids) == 0 {
		return
	}
	clear(kids)
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.kept) < shelfPages {
		p.kept = append(p.kept, kids[:0])
	}
}
