package relayserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"
)

// Push notices tell a phone that something on a host waits or finished.
// They carry counts and nothing else: never a name, a path or any text a
// host sent, because the push service is one more party that would see it.

// Notice is one push to one registered phone.
type Notice struct {
	Platform string `json:"platform"` // ios or android
	Token    string `json:"token"`
	Title    string `json:"title"`
	Message  string `json:"message"`
	Waiting  int    `json:"waiting"`
	Finished int    `json:"finished"`
}

// Pusher delivers notices (APNs and FCM are later; a webhook reaches ntfy,
// a gateway of one's own, or a test).
type Pusher interface {
	Push(ctx context.Context, n Notice) error
}

// WebhookPusher POSTs each notice as JSON to a URL.
type WebhookPusher struct {
	URL    string
	Client *http.Client // nil: a client with a 10 s timeout
}

// Push sends n.
func (w *WebhookPusher) Push(ctx context.Context, n Notice) error {
	body, _ := json.Marshal(n)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Title", n.Title) // ntfy reads the title from here
	c := w.Client
	if c == nil {
		c = &http.Client{Timeout: 10 * time.Second}
	}
	res, err := c.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	if res.StatusCode/100 != 2 {
		return fmt.Errorf("relay: push webhook answered %s", res.Status)
	}
	return nil
}

// LogPusher writes notices to a log: for a relay without a push service.
type LogPusher struct{ Logger *slog.Logger }

// Push logs n, without its token.
func (l LogPusher) Push(_ context.Context, n Notice) error {
	l.Logger.Info("push notice", "platform", n.Platform, "waiting", n.Waiting, "finished", n.Finished)
	return nil
}

// noticeText is the generic notice: counts only.
func noticeText(waiting, finished int) (title, message string) {
	title = "gatehouse"
	switch {
	case waiting > 0 && finished > 0:
		message = fmt.Sprintf("%d waiting for you, %d finished", waiting, finished)
	case waiting > 0:
		message = fmt.Sprintf("%d waiting for you", waiting)
	default:
		message = fmt.Sprintf("%d finished", finished)
	}
	return title, message
}

// coalescer gathers one account's notify frames into one notice per window:
// the first notify opens a window; each notify updates the counts; a notify
// whose waiting count grows halves what is left of the window (someone is
// waiting on more); when the window ends one notice goes out with the latest
// counts. Halving never brings a notice closer than one window after the one
// before: that is the account's push rate, so a device that raises the count
// on every frame cannot make the relay push to the account's phones more than
// once a window (TestPushRateIsPerAccount).
type coalescer struct {
	mu       sync.Mutex
	window   time.Duration
	open     bool
	deadline time.Time
	lastFire time.Time // when the last notice was due; zero before the first
	timer    *time.Timer
	waiting  int
	finished int
	fire     func(waiting, finished int)
}

func (c *coalescer) add(kind string, count int, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.open {
		c.open, c.deadline = true, now.Add(c.window)
		c.waiting, c.finished = 0, 0
		c.timer = time.AfterFunc(c.window, c.flush)
	} else if kind == "waiting" && count > c.waiting {
		c.deadline = c.halved(now)
		c.timer.Reset(c.deadline.Sub(now))
	}
	switch kind {
	case "waiting":
		c.waiting = count
	case "finished":
		c.finished = count
	}
}

// halved is the deadline with half of what is left of the window, but no
// earlier than one window after the last notice.
func (c *coalescer) halved(now time.Time) time.Time {
	d := now.Add(c.deadline.Sub(now) / 2)
	if floor := c.lastFire.Add(c.window); !c.lastFire.IsZero() && d.Before(floor) {
		return floor
	}
	return d
}

func (c *coalescer) flush() {
	c.mu.Lock()
	if !c.open {
		c.mu.Unlock()
		return
	}
	c.open, c.lastFire = false, c.deadline
	w, f := c.waiting, c.finished
	c.mu.Unlock()
	if w > 0 || f > 0 {
		c.fire(w, f)
	}
}

func (c *coalescer) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.timer != nil {
		c.timer.Stop()
	}
	c.open = false
}
