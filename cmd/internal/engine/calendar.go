package engine

import (
	"fmt"
	"sync"
	"time"
	_ "time/tzdata" // zone data in the binary, so a zone resolves the same on every host
)

// Calendar is the calendar unit a window ends with. Weeks start on Monday.
type Calendar uint8

// The calendar units.
const (
	NoCalendar Calendar = iota
	Minute
	Hour
	Day
	Week
	Month
	Year
)

var calendarNames = [...]string{"", "minute", "hour", "day", "week", "month", "year"}

func (c Calendar) String() string {
	if int(c) < len(calendarNames) {
		return calendarNames[c]
	}
	return fmt.Sprintf("calendar(%d)", uint8(c))
}

// MarshalText writes the unit's name.
func (c Calendar) MarshalText() ([]byte, error) {
	if int(c) >= len(calendarNames) {
		return nil, invalid("calendar", "unknown calendar unit %d", uint8(c))
	}
	return []byte(calendarNames[c]), nil
}

// UnmarshalText reads minute, hour, day, week, month or year.
func (c *Calendar) UnmarshalText(b []byte) error {
	for i, n := range calendarNames {
		if string(b) == n {
			*c = Calendar(i)
			return nil
		}
	}
	return invalid("calendar", "must be minute, hour, day, week, month or year, got %q", b)
}

// zones caches resolved time zones: zone data is read once per name and
// process, at validation time, never again under the engine lock. A
// *time.Location is immutable, so sharing it is safe.
var zones sync.Map // string -> *time.Location

func loadZone(name string) (*time.Location, error) {
	if name == "" || name == "UTC" {
		return time.UTC, nil
	}
	if loc, ok := zones.Load(name); ok {
		return loc.(*time.Location), nil
	}
	if name == "Local" {
		return nil, fmt.Errorf("the host's local zone differs between hosts; name the zone")
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, err
	}
	zones.Store(name, loc)
	return loc, nil
}

// calendarEnd returns the end of the calendar unit that holds now (unix
// nanoseconds) in loc: the first instant after now at which the wall clock
// starts a new unit.
func calendarEnd(now int64, c Calendar, loc *time.Location) int64 {
	t := time.Unix(0, now).In(loc)
	var end int64
	switch c {
	case Minute, Hour:
		unit := int64(time.Minute)
		if c == Hour {
			unit = int64(time.Hour)
		}
		_, off := t.Zone()
		local := now + int64(off)*int64(time.Second)
		end = local - floorMod(local, unit) + unit - int64(off)*int64(time.Second)
	case Day:
		end = time.Date(t.Year(), t.Month(), t.Day()+1, 0, 0, 0, 0, loc).UnixNano()
	case Week:
		days := (8 - int(t.Weekday())) % 7
		if days == 0 {
			days = 7
		}
		end = time.Date(t.Year(), t.Month(), t.Day()+days, 0, 0, 0, 0, loc).UnixNano()
	case Month:
		end = time.Date(t.Year(), t.Month()+1, 1, 0, 0, 0, 0, loc).UnixNano()
	default:
		end = time.Date(t.Year()+1, time.January, 1, 0, 0, 0, 0, loc).UnixNano()
	}
	if end <= now {
		return now + 1
	}
	return end
}

func floorMod(a, m int64) int64 {
	r := a % m
	if r < 0 {
		r += m
	}
	return r
}
