package engine

import (
	"errors"
	"testing"
	"time"
)

func zone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := loadZone(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// TestCalendarEnd checks where windows end: month ends, leap years, year
// ends, weeks (starting Monday), and days and hours across daylight saving
// time in a zone that has it.
func TestCalendarEnd(t *testing.T) {
	utc := time.UTC
	ny := zone(t, "America/New_York")
	paris := zone(t, "Europe/Paris")
	kolkata := zone(t, "Asia/Kolkata")
	d := func(loc *time.Location, y int, m time.Month, day, h, min, s int) time.Time {
		return time.Date(y, m, day, h, min, s, 0, loc)
	}
	cases := []struct {
		name string
		now  time.Time
		unit Calendar
		loc  *time.Location
		want time.Time
	}{
		{"end of January", d(utc, 2024, 1, 31, 12, 0, 0), Month, utc, d(utc, 2024, 2, 1, 0, 0, 0)},
		{"February of a leap year", d(utc, 2024, 2, 15, 0, 0, 0), Month, utc, d(utc, 2024, 3, 1, 0, 0, 0)},
		{"February 29th", d(utc, 2024, 2, 29, 23, 59, 59), Day, utc, d(utc, 2024, 3, 1, 0, 0, 0)},
		{"February of a common year", d(utc, 2023, 2, 28, 23, 59, 59), Month, utc, d(utc, 2023, 3, 1, 0, 0, 0)},
		{"February of 2100, not a leap year", d(utc, 2100, 2, 28, 12, 0, 0), Day, utc, d(utc, 2100, 3, 1, 0, 0, 0)},
		{"end of December", d(utc, 2024, 12, 31, 23, 59, 59), Year, utc, d(utc, 2025, 1, 1, 0, 0, 0)},
		{"the first instant of a month opens a new one", d(utc, 2024, 3, 1, 0, 0, 0), Month, utc, d(utc, 2024, 4, 1, 0, 0, 0)},
		{"a minute", d(utc, 2024, 3, 1, 10, 42, 17), Minute, utc, d(utc, 2024, 3, 1, 10, 43, 0)},
		{"a Wednesday's week ends on Monday", d(paris, 2026, 12, 2, 15, 0, 0), Week, paris, d(paris, 2026, 12, 7, 0, 0, 0)},
		{"a Sunday's week ends the next day", d(paris, 2026, 12, 6, 23, 0, 0), Week, paris, d(paris, 2026, 12, 7, 0, 0, 0)},
		{"Monday at midnight opens a new week", d(paris, 2026, 12, 7, 0, 0, 0), Week, paris, d(paris, 2026, 12, 14, 0, 0, 0)},
		{"the 23-hour day of spring forward", d(ny, 2026, 3, 8, 10, 0, 0), Day, ny, d(ny, 2026, 3, 9, 0, 0, 0)},
		{"the 25-hour day of fall back", d(ny, 2026, 11, 1, 12, 0, 0), Day, ny, d(ny, 2026, 11, 2, 0, 0, 0)},
		{"the first 1 a.m. hour of fall back", time.Date(2026, 11, 1, 5, 30, 0, 0, utc), Hour, ny, time.Date(2026, 11, 1, 6, 0, 0, 0, utc)},
		{"the second 1 a.m. hour of fall back", time.Date(2026, 11, 1, 6, 30, 0, 0, utc), Hour, ny, time.Date(2026, 11, 1, 7, 0, 0, 0, utc)},
		{"the hour before spring forward ends at 3 a.m.", d(ny, 2026, 3, 8, 1, 30, 0), Hour, ny, d(ny, 2026, 3, 8, 3, 0, 0)},
		{"a half-hour zone's hour", time.Date(2026, 6, 1, 10, 10, 0, 0, utc), Hour, kolkata, time.Date(2026, 6, 1, 10, 30, 0, 0, utc)},
		{"a month in Paris ends at 23:00 UTC", d(paris, 2026, 12, 15, 0, 0, 0), Month, paris, time.Date(2026, 12, 31, 23, 0, 0, 0, utc)},
	}
	for _, tc := range cases {
		got := calendarEnd(tc.now.UnixNano(), tc.unit, tc.loc)
		if got != tc.want.UnixNano() {
			t.Errorf("%s: %s ends at %s, want %s", tc.name, tc.now, time.Unix(0, got).In(tc.loc), tc.want.In(tc.loc))
		}
	}
	if h := time.Duration(d(ny, 2026, 3, 9, 0, 0, 0).Sub(d(ny, 2026, 3, 8, 0, 0, 0))); h != 23*time.Hour {
		t.Fatalf("the spring-forward day lasts %s", h)
	}
}

// TestCalendarQuota is "two a day" in New York over the spring-forward
// night: the window ends at local midnight, 04:00 UTC.
func TestCalendarQuota(t *testing.T) {
	f := newFixture(t)
	ny := zone(t, "America/New_York")
	f.clock.Set(time.Date(2026, 3, 8, 10, 0, 0, 0, ny))
	day := map[string]Rate{"tool-calls": {Limit: 2, Calendar: Day, Zone: "America/New_York"}}
	tenant := f.tenant(Spec{Name: "acme", Rates: day})
	must(t, f.e.Consume(f.sys(), tenant, "tool-calls", 2))
	_, err := f.e.ConsumeWith(f.sys(), tenant, "tool-calls", 1, ConsumeOptions{})
	var d *DeniedError
	midnight := time.Date(2026, 3, 9, 4, 0, 0, 0, time.UTC)
	if !errors.As(err, &d) || d.RetryAfter != midnight.Sub(f.clock.Now()) || d.Reset != midnight.UnixNano() {
		t.Fatalf("third call of the day: %+v, want a retry at local midnight", err)
	}
	f.clock.Set(midnight.Add(-time.Nanosecond))
	if err := f.e.Consume(f.sys(), tenant, "tool-calls", 1); !errors.Is(err, ErrDenied) {
		t.Fatalf("a nanosecond before midnight: %v", err)
	}
	f.clock.Set(midnight)
	res, err := f.e.ConsumeWith(f.sys(), tenant, "tool-calls", 2, ConsumeOptions{})
	if err != nil || res.Reset != time.Date(2026, 3, 10, 0, 0, 0, 0, ny).UnixNano() {
		t.Fatalf("at midnight: %+v %v, want two more until the next midnight", res, err)
	}
}
