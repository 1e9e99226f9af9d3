package gubernator

import (
	"testing"

	pb "governor.dev/governor/internal/gen/gubernator/v1"
)

// FuzzDecode feeds arbitrary bodies through the HTTP JSON decoder and the
// validation: nothing panics, and every check that passes is one the
// limiter can take as it is.
func FuzzDecode(f *testing.F) {
	f.Add(`{"requests":[{"name":"requests_per_sec","uniqueKey":"account:12345","hits":"1","limit":"10","duration":"1000"}]}`)
	f.Add(`{"requests":[{"name":"v","unique_key":"s","hits":1,"limit":10,"duration":60000,"burst":10,"algorithm":"LEAKY_BUCKET","max_wait":"120000"}]}`)
	f.Add(`{"requests":[{"name":"d","unique_key":"k","limit":5,"duration":2,"behavior":"DURATION_IS_GREGORIAN"}]}`)
	f.Add(`{"requests":[{"name":"r","unique_key":"k","limit":5,"duration":9,"behavior":40}]}`)
	f.Fuzz(func(t *testing.T, body string) {
		var m pb.GetRateLimitsReq
		if jsonIn.Unmarshal([]byte(body), &m) != nil {
			return
		}
		for _, r := range m.Requests {
			c, err := toCheck(r)
			if err != nil {
				if _, ok := err.(*RequestError); !ok {
					t.Fatalf("%T is not a request's error", err)
				}
				continue
			}
			switch {
			case c.Name == "" || c.Key == "":
				t.Fatalf("accepted without a name or key: %+v", c)
			case c.Hits < 0 || c.Limit < 1 || c.Limit > maxLimit || c.Burst < 1 || c.Burst > maxLimit:
				t.Fatalf("accepted amounts out of bounds: %+v", c)
			case (c.Calendar == NoCalendar) == (c.Window == 0):
				t.Fatalf("accepted neither or both of a window and a calendar: %+v", c)
			case c.Calendar != NoCalendar && c.Leaky:
				t.Fatalf("accepted a leaky calendar window: %+v", c)
			case c.MaxWait < 0 || c.MaxWait > 0 && (!c.Leaky || c.Reset || c.Drain):
				t.Fatalf("accepted max_wait where it does not combine: %+v", c)
			case c.Reset && c.Hits != 0:
				t.Fatalf("accepted hits with a reset: %+v", c)
			}
		}
	})
}
