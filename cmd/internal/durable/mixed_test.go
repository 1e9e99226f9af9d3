package durable

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"reflect"
	"testing"

	"governor.dev/governor/cmd/internal/engine"
	"governor.dev/governor/cmd/internal/eventlog"
	"governor.dev/governor/cmd/internal/testclock"
)

// TestJSONRecordLoadsAndGrowsBinary: a record written while everything was
// JSON (a JSON snapshot, JSON events after it) loads; the events added then
// are binary, after the JSON ones, and the mixed record loads to the state
// that was live; so does the binary snapshot taken next.
func TestJSONRecordLoadsAndGrowsBinary(t *testing.T) {
	for name, fresh := range backends(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			clk := newClock()
			url := fresh(t)
			old := jsonRecord(t, fresh(t), url, clk)
			s := open(t, url, clk, math.MaxInt64)
			if got := s.Engine.Dump(); !reflect.DeepEqual(got, old) {
				t.Fatalf("the JSON record loads to another state:\n got %+v\nwant %+v", got, old)
			}
			workload(t, s, clk, 2)
			want := s.Engine.Dump()
			must(t, s.Close(ctx))
			if forms := recordForms(t, url); forms["json snapshot"] != 1 || forms["json event"] == 0 || forms["binary event"] == 0 {
				t.Fatalf("the record is not a JSON snapshot, JSON events, then binary events: %v", forms)
			}
			for _, snapshot := range []bool{false, true} {
				s := open(t, url, clk, math.MaxInt64)
				if got := s.Engine.Dump(); !reflect.DeepEqual(got, want) {
					t.Fatalf("snapshot taken %v: the mixed record restores to another state:\n got %+v\nwant %+v", snapshot, got, want)
				}
				if snapshot {
					must(t, s.SnapshotNow(ctx))
				}
				must(t, s.Close(ctx))
			}
			if forms := recordForms(t, url); forms["binary snapshot"] != 1 {
				t.Fatalf("the snapshot taken after the JSON record is not binary: %v", forms)
			}
		})
	}
}

// jsonRecord runs a workload on the record at scratch, then writes at url
// what the code that stored JSON would have written for it: every event as
// JSON, and a JSON snapshot of its middle. It returns the state the record
// holds.
func jsonRecord(t *testing.T, scratch, url string, clk *testclock.Clock) *engine.Snapshot {
	ctx := context.Background()
	src := open(t, scratch, clk, math.MaxInt64)
	workload(t, src, clk, 1)
	want := src.Engine.Dump()
	must(t, src.Close(ctx))
	var recs []eventlog.Record
	b, err := eventlog.Open(ctx, scratch, quiet())
	must(t, err)
	must(t, b.Load(ctx, func(*eventlog.Snapshot) error { return nil }, func(r eventlog.Record) error {
		recs = append(recs, r)
		return nil
	}))
	must(t, b.Close())
	mid := engine.New(engine.Options{Clock: clk})
	for i := range recs {
		ev, err := engine.DecodeEvent(recs[i].Data)
		must(t, err)
		if i < len(recs)/2 {
			must(t, mid.Replay(ev))
		}
		recs[i].Data, err = json.Marshal(ev)
		must(t, err)
	}
	st, err := json.Marshal(mid.Dump())
	must(t, err)
	var packed bytes.Buffer
	_, err = pack(&packed, func(w io.Writer) (int64, error) { n, err := w.Write(st); return int64(n), err })
	must(t, err)
	b, err = eventlog.Open(ctx, url, quiet())
	must(t, err)
	defer b.Close()
	must(t, b.Append(ctx, recs))
	must(t, b.SaveSnapshot(ctx, eventlog.Snapshot{Seq: mid.Seq(), Time: recs[len(recs)/2-1].Time, Data: packed.Bytes()}))
	return want
}

// recordForms counts the forms of the snapshot and events at url.
func recordForms(t *testing.T, url string) map[string]int {
	t.Helper()
	b, err := eventlog.Open(context.Background(), url, quiet())
	must(t, err)
	defer b.Close()
	forms := map[string]int{}
	form := func(data []byte) string {
		if data[0] == '{' {
			return "json"
		}
		return "binary"
	}
	must(t, b.Load(context.Background(), func(s *eventlog.Snapshot) error {
		if s != nil {
			raw, err := unpack(s.Data)
			must(t, err)
			forms[form(raw)+" snapshot"]++
		}
		return nil
	}, func(r eventlog.Record) error {
		forms[form(r.Data)+" event"]++
		return nil
	}))
	return forms
}
