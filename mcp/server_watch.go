package mcp

import (
	"context"
	"sync"

	"github.com/dsh-go/dsh/engine"
)

// watcher re-syncs a server's tool list after the engine's tools change.
// The engine calls its observer inside a registration, so the observer only
// flags the change; a goroutine of the watcher's own syncs, once for any
// number of changes flagged while it was busy.
type watcher struct {
	kick   chan struct{}
	cancel context.CancelFunc
	done   chan struct{}
	undo   engine.Disposer
	once   sync.Once
}

// startWatch makes s follow the engine's tool changes until Close. ctx's
// values reach the syncs; its cancellation does not.
func (s *Server) startWatch(ctx context.Context) *watcher {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	w := &watcher{kick: make(chan struct{}, 1), cancel: cancel, done: make(chan struct{})}
	w.undo = s.svc.Global().OnChange(func(engine.Change) error {
		select {
		case w.kick <- struct{}{}:
		default: // a sync is due already
		}
		return nil
	})
	go func() {
		defer close(w.done)
		for {
			select {
			case <-ctx.Done():
				return
			case <-w.kick:
			}
			if err := s.Sync(ctx); err != nil && ctx.Err() == nil {
				s.logger.Warn("MCP tool list not updated", "error", err)
			}
		}
	}()
	return w
}

// stop ends the watch and waits for a sync under way.
func (w *watcher) stop() {
	w.once.Do(func() {
		w.undo()
		w.cancel()
		<-w.done
	})
}
