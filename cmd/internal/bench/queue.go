package bench

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// queued reads governor_waiting_acquires for class from the metrics.
func (t *target) queued(ctx context.Context, class string) (int, error) {
	if t.metricsURL == "" {
		return 0, fmt.Errorf("%w: the queue's depth is read from governord's metrics; give -metrics-url", ErrOptions)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, t.metricsURL, nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("read governord's metrics: %w", err)
	}
	defer resp.Body.Close()
	series := fmt.Sprintf("governor_waiting_acquires{class=%q} ", class)
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), series); ok {
			f, err := strconv.ParseFloat(v, 64)
			return int(f), err
		}
	}
	return 0, sc.Err()
}
