package web_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"google.golang.org/protobuf/types/known/durationpb"

	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// row is the selector of a node's row; bar of one of its bars' numbers.
func row(id uint64) string { return fmt.Sprintf(`li[data-id="%d"] > .row`, id) }
func bar(id uint64, cap string) string {
	return fmt.Sprintf(`li[data-id="%d"] > .row .bar[data-cap="%s"] .num`, id, cap)
}

// textIs is a JavaScript test that an element's text is want.
func textIs(sel, want string) string {
	return fmt.Sprintf(`(document.querySelector(%q)?.textContent ?? "") === %q`, sel, want)
}

// A tenant's key sees its own subtree, live, and nothing of another
// tenant's; a use through the API moves its bar within a second.
func TestDashboardShowsOnlyTheKeysSubtreeLive(t *testing.T) {
	s := newSite(t)
	a, b := s.session(keyA), s.session(keyB)
	job := s.node(a, &governorv1.NodeSpec{Name: "a-job", Quotas: map[string]int64{"tokens": 10}})
	secret := s.node(b, &governorv1.NodeSpec{Name: "b-secret"})
	ctx := browser(t)
	run(t, ctx, "sign in", signIn(s, keyA), chromedp.WaitVisible(chromedp.CSS(row(job))))
	html := get(t, ctx, "read the tree", chromedp.OuterHTML(chromedp.CSS("#tree")))
	if strings.Contains(html, "b-secret") || strings.Contains(html, fmt.Sprintf(`data-id="%d"`, secret)) || strings.Contains(html, "team-b") {
		t.Fatalf("team-a's tree shows team-b's nodes:\n%s", html)
	}
	run(t, ctx, "see a-job's quota", within(2*time.Second, textIs(bar(job, "quota:tokens"), "0 / 10")))
	box := fmt.Sprintf(`[...document.querySelectorAll(%q)].map(e => { const r = e.getBoundingClientRect(); return [r.x, r.y, r.width, r.height].join(" ") }).join("; ")`,
		fmt.Sprintf(`li[data-id="%d"] > .row, li[data-id="%d"] > .row .track, li[data-id="%d"] > .row .num`, job, job, job))
	before := get(t, ctx, "measure a-job's row", chromedp.Evaluate[string](box))
	if _, err := a.Consume(context.Background(), connect.NewRequest(&governorv1.ConsumeRequest{NodeId: job, Resource: "tokens", Amount: 10})); err != nil {
		t.Fatal(err)
	}
	run(t, ctx, "the bar moves within 1s", within(time.Second, textIs(bar(job, "quota:tokens"), "10 / 10")))
	if after := get(t, ctx, "measure a-job's row again", chromedp.Evaluate[string](box)); after != before {
		t.Errorf("a-job's row moved or changed size when its numbers changed: %s, then %s", before, after)
	}
	next := s.node(a, &governorv1.NodeSpec{Name: "a-next"})
	run(t, ctx, "a new node appears within 1s", within(time.Second, fmt.Sprintf("!!document.querySelector(%q)", row(next))))
	s.node(b, &governorv1.NodeSpec{Name: "b-later"})
	if _, err := b.Consume(context.Background(), connect.NewRequest(&governorv1.ConsumeRequest{Resource: "tokens", Amount: 1})); err != nil {
		t.Fatal(err)
	}
	run(t, ctx, "a-job's bar", within(time.Second, textIs(bar(job, "quota:tokens"), "10 / 10")))
	time.Sleep(300 * time.Millisecond) // what team-b did would have arrived by now
	html = get(t, ctx, "read the tree", chromedp.OuterHTML(chromedp.CSS("#tree")))
	if strings.Contains(html, "b-later") || strings.Contains(html, "b-secret") {
		t.Fatalf("team-a's live tree shows team-b's nodes:\n%s", html)
	}
	screenshot(t, ctx, "dashboard")
	run(t, ctx, "phone width", chromedp.EmulateViewport(390, 844), chromedp.Click(chromedp.CSS(row(job))))
	fits := get(t, ctx, "measure", chromedp.Evaluate[bool](`document.documentElement.scrollWidth <= window.innerWidth`))
	if !fits {
		t.Error("at a phone's width the page scrolls sideways")
	}
	screenshot(t, ctx, "dashboard-phone")
}

// A wrong key is told clearly, and nothing else is shown.
func TestDashboardRefusesAWrongKey(t *testing.T) {
	s := newSite(t)
	ctx := browser(t)
	run(t, ctx, "sign in with a wrong key", signIn(s, "wrong-key-0123456789"),
		within(5*time.Second, `document.querySelector("#signin-error").textContent !== ""`))
	msg := get(t, ctx, "read the error", chromedp.Text(chromedp.CSS("#signin-error")))
	appHidden := get(t, ctx, "look", chromedp.Evaluate[bool](`document.querySelector("#app").hidden && sessionStorage.length === 0`))
	if !strings.Contains(msg, "not one governord knows") || !appHidden {
		t.Fatalf("a wrong key shows %q (app hidden and key forgotten: %v)", msg, appHidden)
	}
}

// An edit of a quota or a rate in the dashboard is what the API then
// enforces, and a refused edit shows the API's own message.
func TestDashboardQuotaEditIsEnforced(t *testing.T) {
	s := newSite(t)
	a := s.session(keyA)
	job := s.node(a, &governorv1.NodeSpec{Name: "a-job"})
	ctx := browser(t)
	run(t, ctx, "set a quota", signIn(s, keyA),
		chromedp.Click(chromedp.CSS(row(job))),
		chromedp.WaitVisible(chromedp.CSS("#edit-quota")),
		chromedp.SendKeys(chromedp.CSS(`#edit-quota input[name=resource]`), "tokens"),
		chromedp.SendKeys(chromedp.CSS(`#edit-quota input[name=value]`), "5"),
		chromedp.Click(chromedp.CSS(`#edit-quota button`)),
		within(5*time.Second, textIs("#edit-ok", "quota on tokens saved")),
		within(time.Second, textIs(bar(job, "quota:tokens"), "0 / 5")))
	ctxb := context.Background()
	if _, err := a.Consume(ctxb, connect.NewRequest(&governorv1.ConsumeRequest{NodeId: job, Resource: "tokens", Amount: 5})); err != nil {
		t.Fatalf("consume within the new quota: %v", err)
	}
	_, err := a.Consume(ctxb, connect.NewRequest(&governorv1.ConsumeRequest{NodeId: job, Resource: "tokens", Amount: 1}))
	if connect.CodeOf(err) != connect.CodeResourceExhausted {
		t.Fatalf("consume past the quota set in the dashboard: %v, want resource_exhausted", err)
	}
	_, apiErr := a.SetQuota(ctxb, connect.NewRequest(&governorv1.SetQuotaRequest{NodeId: job, Resource: "tokens", Value: ptr(int64(-1))}))
	var ce *connect.Error
	if !errors.As(apiErr, &ce) {
		t.Fatalf("a negative quota through the API: %v", apiErr)
	}
	run(t, ctx, "a negative quota",
		chromedp.SetValue(chromedp.CSS(`#edit-quota input[name=value]`), "-1"),
		chromedp.Click(chromedp.CSS(`#edit-quota button`)),
		within(5*time.Second, textIs("#edit-error", ce.Message())))
	run(t, ctx, "the bar still shows the cap", within(time.Second, textIs(bar(job, "quota:tokens"), "5 / 5")))

	_, apiErr = a.SetRate(ctxb, connect.NewRequest(&governorv1.SetRateRequest{NodeId: job, Resource: "calls", Rate: &governorv1.Rate{Limit: 0, Period: durationpb.New(time.Minute)}}))
	if !errors.As(apiErr, &ce) {
		t.Fatalf("a rate of 0 through the API: %v", apiErr)
	}
	run(t, ctx, "a rate of 0, then 3 a minute",
		chromedp.SendKeys(chromedp.CSS(`#edit-rate input[name=resource]`), "calls"),
		chromedp.SendKeys(chromedp.CSS(`#edit-rate input[name=limit]`), "0"),
		chromedp.SendKeys(chromedp.CSS(`#edit-rate input[name=period]`), "1m"),
		chromedp.Click(chromedp.CSS(`#edit-rate button`)),
		within(5*time.Second, textIs("#edit-error", ce.Message())),
		chromedp.SetValue(chromedp.CSS(`#edit-rate input[name=limit]`), "3"),
		chromedp.Click(chromedp.CSS(`#edit-rate button`)),
		within(5*time.Second, textIs("#edit-ok", "rate on calls saved")),
		within(time.Second, textIs(bar(job, "rate:calls"), "3 of 3 left")))
	for range 3 {
		if _, err := a.Consume(ctxb, connect.NewRequest(&governorv1.ConsumeRequest{NodeId: job, Resource: "calls", Amount: 1})); err != nil {
			t.Fatalf("consume within the rate set in the dashboard: %v", err)
		}
	}
	_, err = a.Consume(ctxb, connect.NewRequest(&governorv1.ConsumeRequest{NodeId: job, Resource: "calls", Amount: 1}))
	if connect.CodeOf(err) != connect.CodeResourceExhausted {
		t.Fatalf("a fourth call in the minute: %v, want resource_exhausted", err)
	}
}

// A cancel asks first; No changes nothing, Yes cancels through the API and
// the tree shows it.
func TestDashboardCancelsAfterConfirming(t *testing.T) {
	s := newSite(t)
	a := s.session(keyA)
	job := s.node(a, &governorv1.NodeSpec{Name: "a-job"})
	state := func() governorv1.NodeState {
		res, err := a.GetNode(context.Background(), connect.NewRequest(&governorv1.GetNodeRequest{NodeId: job}))
		if err != nil {
			t.Fatal(err)
		}
		return res.Msg.Node.State
	}
	ctx := browser(t)
	run(t, ctx, "ask, then say no", signIn(s, keyA),
		chromedp.Click(chromedp.CSS(row(job))),
		chromedp.Click(chromedp.CSS("#cancel")),
		chromedp.WaitVisible(chromedp.CSS("#confirm-no")))
	screenshot(t, ctx, "dashboard-cancel")
	run(t, ctx, "say no", chromedp.Click(chromedp.CSS("#confirm-no")), chromedp.WaitNotVisible(chromedp.CSS("#confirm")))
	if st := state(); st != governorv1.NodeState_NODE_STATE_ACTIVE {
		t.Fatalf("after No, a-job is %s", st)
	}
	run(t, ctx, "say yes",
		chromedp.Click(chromedp.CSS("#cancel")),
		chromedp.Click(chromedp.CSS("#confirm-yes")),
		within(5*time.Second, textIs("#edit-ok", "a-job cancelled")),
		within(time.Second, textIs(fmt.Sprintf(`li[data-id="%d"] > .row .state`, job), "cancelled")))
	if st := state(); st != governorv1.NodeState_NODE_STATE_CANCELLED {
		t.Fatalf("after Yes, a-job is %s", st)
	}
}

// The explain panel of a node with a waiting acquire, reached from the
// keyboard, lists every limit that binds: the node's and its tenant's.
func TestDashboardExplainsAWaitingAcquire(t *testing.T) {
	s := newSite(t)
	a, holder, waiter := s.session(keyA), s.session(keyA), s.session(keyA)
	job := s.node(a, &governorv1.NodeSpec{Name: "a-job", Limits: map[string]int64{"db": 1}})
	ctxb := context.Background()
	if _, err := holder.Acquire(ctxb, connect.NewRequest(&governorv1.AcquireRequest{NodeId: job, Class: "db"})); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithCancel(ctxb)
	defer cancel()
	go waiter.Acquire(wctx, connect.NewRequest(&governorv1.AcquireRequest{NodeId: job, Class: "db"}))
	ctx := browser(t)
	run(t, ctx, "explain a-job from the keyboard", signIn(s, keyA),
		chromedp.WaitVisible(chromedp.CSS(row(job))),
		chromedp.Focus(chromedp.CSS(row(tenantOf(t, a)))),
		chromedp.KeyEvent(kb.ArrowDown),
		within(5*time.Second, fmt.Sprintf(`document.activeElement === document.querySelector(%q)`, row(job))),
		chromedp.KeyEvent("x"),
		within(5*time.Second, `document.querySelectorAll("#explain-out li.wait").length === 1`))
	caps := get(t, ctx, "read the binding caps", chromedp.Evaluate[[]string](`[...document.querySelectorAll("#explain-out > li.cap")].map(li => li.dataset.kind + "@" + li.dataset.node)`))
	want := []string{fmt.Sprintf("limit@%d", job), fmt.Sprintf("limit@%d", tenantOf(t, a))}
	if strings.Join(caps, " ") != strings.Join(want, " ") {
		t.Fatalf("the explain panel lists %v, want both full limits %v", caps, want)
	}
	screenshot(t, ctx, "dashboard-explain")
}

func tenantOf(t *testing.T, api interface {
	GetNode(context.Context, *connect.Request[governorv1.GetNodeRequest]) (*connect.Response[governorv1.GetNodeResponse], error)
}) uint64 {
	res, err := api.GetNode(context.Background(), connect.NewRequest(&governorv1.GetNodeRequest{}))
	if err != nil {
		t.Fatal(err)
	}
	return res.Msg.Node.Id
}

func ptr[T any](v T) *T { return &v }
