package daemon

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// failedCallGrace is how long, after a failed commit, the calls in flight
// have to send their Unavailable before their connections are closed.
const failedCallGrace = time.Second

// supervise waits for the one event that ends the daemon (Stop, a failed
// commit, a listener that failed) and stops everything.
func (d *Daemon) supervise() {
	defer close(d.done)
	select {
	case <-d.failed():
		d.err = d.fail()
	case err := <-d.serveErr:
		d.log.Error("a listener failed; stopping", "err", err)
		d.err = errors.Join(err, d.shutdown(context.Background()))
	case <-d.stopping:
		d.err = d.shutdown(d.stopCtx)
	}
}

// shutdown stops gracefully: new calls are refused with Unavailable, and so
// are waiting acquires and watch streams, which could wait for ever; the
// listener closes; the calls in flight finish within the grace period (the
// connections of those still running are then closed); then the background
// duties stop and the record commits what is pending and closes.
func (d *Daemon) shutdown(ctx context.Context) error {
	d.log.Info("stopping: refusing new calls, finishing those in flight", "grace", d.grace)
	d.reaper.stop()
	d.closeAPIs()
	grace, cancel := context.WithTimeout(ctx, d.grace)
	err := d.apiHTTP.Shutdown(grace)
	d.stopGRPC(grace)
	cancel()
	if err != nil {
		d.log.Warn("calls still running after the grace period are cut off", "err", err)
	}
	errs := []error{d.apiHTTP.Close()}
	if d.metricsHTTP != nil {
		errs = append(errs, d.metricsHTTP.Close())
	}
	d.stopDuties()
	if err := d.closeRecord(ctx); err != nil {
		errs = append(errs, fmt.Errorf("close the record: %w", err))
	}
	d.serving.Wait()
	d.stopTracing()
	err = errors.Join(errs...)
	if err == nil {
		d.log.Info("stopped; everything acknowledged is on record")
	}
	return err
}

// fail stops serving at once after a failed commit: the engine is ahead of
// its record, so no answer may be given from it. The calls in flight fail
// with Unavailable, the listeners close, and the error returned tells the
// process to exit so that a supervisor starts it again from the record.
func (d *Daemon) fail() error {
	cause := d.store.Err()
	d.log.Error("a commit to the record failed: stopped serving; start governord again to rebuild from the record", "err", cause)
	d.closeAPIs()
	grace, cancel := context.WithTimeout(context.Background(), failedCallGrace)
	_ = d.apiHTTP.Shutdown(grace) // closes the listener now, lets the failed calls answer
	d.stopGRPC(grace)
	cancel()
	_ = d.apiHTTP.Close()
	if d.metricsHTTP != nil {
		_ = d.metricsHTTP.Close()
	}
	d.stopDuties()
	closing, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = d.store.Close(closing) // reports the same failure
	d.serving.Wait()
	d.stopTracing()
	return fmt.Errorf("%w: %w", ErrRecordFailed, cause)
}

// failed is closed once the record can take nothing more; a cluster
// member's never is (a member that loses its quorum answers NotLeader).
func (d *Daemon) failed() <-chan struct{} {
	if d.store == nil {
		return nil
	}
	return d.store.Failed()
}

// stopDuties stops the background duties: the reaper and the adaptive
// controllers of a single governord, the leader's seeding of a member.
func (d *Daemon) stopDuties() {
	if d.member != nil {
		d.member.stopSeeding()
		return
	}
	d.reaper.stop()
	d.ctrl.Stop()
}

// closeRecord commits what is pending and closes the record, or shuts a
// cluster member down.
func (d *Daemon) closeRecord(ctx context.Context) error {
	if d.member != nil {
		return d.member.close()
	}
	return d.store.Close(ctx)
}
