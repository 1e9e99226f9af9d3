package governor

import (
	"context"
	"fmt"
	"iter"

	"connectrpc.com/connect"

	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// MaxPageSize is the most children one page may hold; DefaultPageSize is
// what a Page of Size 0 holds.
const (
	DefaultPageSize = 1000
	MaxPageSize     = 5000
)

// Page selects one page of a node's children: those whose ids are above
// After, in id order, at most Size of them. The zero Page is the first page
// of DefaultPageSize children.
type Page struct {
	After uint64 // 0 for the first page, then the Next of the previous page
	Size  int    // 0: DefaultPageSize; at most MaxPageSize
}

// ChildPage is one page of a node's children, as DescribePage reads it.
type ChildPage struct {
	Node     Node   // the node itself
	Children []Node // at most the page's size, in id order
	Next     uint64 // the After of the next page; 0 when this page is the last
}

// DescribePage reads node id (0: the key's scope) and one page of its
// children: the active ones and those ended within the retention period.
// Pages read one after another, each from the Next of the one before, hand
// out every child that lives throughout once, in id order, whatever the
// node's width: a child removed before its page is read is not in it, one
// created meanwhile comes at the end. Each child is as it was when its page
// was read. A Size below 0 or above MaxPageSize is ErrInvalid, sent
// nowhere; a node outside the key's scope is ErrForbidden or ErrNotFound,
// as for Describe.
func (c *Client) DescribePage(ctx context.Context, id uint64, page Page) (ChildPage, error) {
	if page.Size < 0 || page.Size > MaxPageSize {
		return ChildPage{}, fmt.Errorf("%w: page size %d; it must be 1 to %d, or 0 for %d", ErrInvalid, page.Size, MaxPageSize, DefaultPageSize)
	}
	s, err := c.liveSession(ctx)
	if err != nil {
		return ChildPage{}, err
	}
	req := &governorv1.GetNodeRequest{NodeId: id, IncludeChildren: true, PageSize: uint32(page.Size), Cursor: page.After}
	res, err := s.api.GetNode(ctx, connect.NewRequest(req))
	if err != nil {
		return ChildPage{}, s.called(ctx, "describe", err)
	}
	out := ChildPage{Node: node(res.Msg.Node), Next: res.Msg.NextCursor, Children: make([]Node, 0, len(res.Msg.Children))}
	for _, ch := range res.Msg.Children {
		out.Children = append(out.Children, node(ch))
	}
	return out, nil
}

// Children iterates over every child of node id (0: the key's scope),
// reading size of them at a time (0: DefaultPageSize) with DescribePage, so
// that no answer grows with the node's width. It yields the children in id
// order, each once, with what DescribePage promises between two pages. It
// stops at the first error, which it yields with a zero Node.
func (c *Client) Children(ctx context.Context, id uint64, size int) iter.Seq2[Node, error] {
	return func(yield func(Node, error) bool) {
		page := Page{Size: size}
		for {
			p, err := c.DescribePage(ctx, id, page)
			if err != nil {
				yield(Node{}, err)
				return
			}
			for _, ch := range p.Children {
				if !yield(ch, nil) {
					return
				}
			}
			if p.Next == 0 {
				return
			}
			page.After = p.Next
		}
	}
}
