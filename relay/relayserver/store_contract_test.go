package relayserver

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/pgtest"
	"github.com/gatehouse/gatehouse/relay"
)

// One PostgreSQL server for the package's tests, stopped after them; the
// run fails if any process the tests started outlives them.
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// forEachStore runs f against a new SQLite store (a temporary file) and a
// new PostgreSQL store (a fresh database): every behaviour of the store is
// one contract, whichever database holds it.
func forEachStore(t *testing.T, f func(t *testing.T, st *Store)) {
	t.Run("sqlite", func(t *testing.T) {
		st, err := OpenStore(filepath.Join(t.TempDir(), "relay.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		f(t, st)
	})
	t.Run("postgres", func(t *testing.T) {
		st, err := OpenPostgres(context.Background(), pgtest.Start(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		f(t, st)
	})
}

var alice = relay.Account{ID: "gh:1", Login: "alice"}

func dev(id, key string) relay.Device {
	return relay.Device{ID: id, Name: id + " name", Platform: "cli", PublicKey: key}
}

// clock makes st's time a test's to move.
func clock(st *Store) *time.Time {
	now := time.UnixMilli(1_800_000_000_000)
	st.now = func() time.Time { return now }
	return &now
}

func mustRegister(t *testing.T, st *Store, a relay.Account, d relay.Device) string {
	t.Helper()
	gen, err := st.Register(context.Background(), a, d)
	if err != nil {
		t.Fatalf("register %s: %v", d.ID, err)
	}
	return gen
}

func TestContractRegister(t *testing.T) {
	forEachStore(t, func(t *testing.T, st *Store) {
		ctx := context.Background()
		gen := mustRegister(t, st, alice, dev("laptop", "k1"))
		renamed := dev("laptop", "k1")
		renamed.Name, renamed.Platform = "new name", "android"
		if again := mustRegister(t, st, relay.Account{ID: alice.ID, Login: "alice2", AvatarURL: "u"}, renamed); again != gen {
			t.Fatalf("same id and key got a new gen: %s, was %s", again, gen)
		}
		if _, err := st.Register(ctx, alice, dev("laptop", "other key")); !errors.Is(err, ErrKeyConflict) {
			t.Fatalf("another key took the id: %v", err)
		}
		a, err := st.Account(ctx, alice.ID)
		if err != nil || a.Login != "alice2" || a.AvatarURL != "u" {
			t.Fatalf("account not refreshed: %+v %v", a, err)
		}
		ds, err := st.Devices(ctx, alice.ID)
		if err != nil || len(ds) != 1 || ds[0].Name != "new name" || ds[0].Platform != "android" || ds[0].PublicKey != "k1" {
			t.Fatalf("devices: %+v %v", ds, err)
		}
		if g, ok, err := st.Gen(ctx, alice.ID, "laptop"); err != nil || !ok || g != gen {
			t.Fatalf("gen %q %v", g, ok)
		}
		if _, ok, err := st.Gen(ctx, alice.ID, "nobody"); err != nil || ok {
			t.Fatal("an unknown device has a gen")
		}
		if _, err := st.Account(ctx, "gh:404"); !errors.Is(err, sql.ErrNoRows) {
			t.Fatalf("unknown account: %v", err)
		}
	})
}

func TestContractEleventhDevice(t *testing.T) {
	forEachStore(t, func(t *testing.T, st *Store) {
		for i := range MaxDevices {
			mustRegister(t, st, alice, dev(fmt.Sprint("d", i), "k"))
		}
		if _, err := st.Register(context.Background(), alice, dev("d10", "k")); !errors.Is(err, ErrTooManyDevices) {
			t.Fatalf("11th device: %v", err)
		}
		mustRegister(t, st, alice, dev("d3", "k")) // a known device signs in again at the limit
		mustRegister(t, st, relay.Account{ID: "gh:2", Login: "bob"}, dev("d10", "k"))
	})
}

func TestContractInvites(t *testing.T) {
	forEachStore(t, func(t *testing.T, st *Store) {
		ctx := context.Background()
		now := clock(st)
		code, err := st.CreateInvite(ctx, "team")
		if err != nil {
			t.Fatal(err)
		}
		mustRegister(t, st, relay.Account{ID: "inv:team", Login: "team"}, dev("phone", "k1"))
		// A registration that fails leaves the code unspent for the retry.
		if _, _, err := st.RegisterInvite(ctx, code, dev("phone", "k2")); !errors.Is(err, ErrKeyConflict) {
			t.Fatalf("conflict through an invite: %v", err)
		}
		a, gen, err := st.RegisterInvite(ctx, " "+code+"\n", dev("tablet", "k3")) // as typed: spaces, any case
		if err != nil || a.ID != "inv:team" || a.Login != "team" || gen == "" {
			t.Fatalf("invite: %+v %q %v", a, gen, err)
		}
		if _, _, err := st.RegisterInvite(ctx, code, dev("other", "k4")); !errors.Is(err, ErrBadInvite) {
			t.Fatalf("an invite worked twice: %v", err)
		}
		if _, _, err := st.RegisterInvite(ctx, "NOSUCHCODE", dev("other", "k4")); !errors.Is(err, ErrBadInvite) {
			t.Fatalf("unknown code: %v", err)
		}
		late, _ := st.CreateInvite(ctx, "team")
		*now = now.Add(inviteLife)
		if _, _, err := st.RegisterInvite(ctx, late, dev("other", "k4")); !errors.Is(err, ErrBadInvite) {
			t.Fatalf("expired code: %v", err)
		}
		for _, bad := range []string{"", "a b", string(make([]byte, maxInviteAccount+1))} {
			if _, err := st.CreateInvite(ctx, bad); err == nil {
				t.Errorf("account name %q accepted", bad)
			}
		}
	})
}

func TestContractTombstones(t *testing.T) {
	forEachStore(t, func(t *testing.T, st *Store) {
		ctx := context.Background()
		mustRegister(t, st, alice, dev("d-host", "host key"))
		if ok, err := st.DeleteDevice(ctx, alice.ID, "d-host"); !ok || err != nil {
			t.Fatalf("delete: %v %v", ok, err)
		}
		if ok, err := st.DeleteDevice(ctx, alice.ID, "d-host"); ok || err != nil {
			t.Fatalf("second delete: %v %v", ok, err)
		}
		for _, id := range []string{"d-host", "D-HOST", "D-Host"} {
			if _, err := st.Register(ctx, alice, dev(id, "attacker key")); !errors.Is(err, ErrKeyConflict) {
				t.Fatalf("removed id %q taken by another key: %v", id, err)
			}
		}
		mustRegister(t, st, alice, dev("d-host", "host key")) // the same key comes back
		// The tombstone of a device removed twice keeps its latest key.
		mustRegister(t, st, alice, dev("d-2", "first"))
		st.DeleteDevice(ctx, alice.ID, "d-2")
		mustRegister(t, st, alice, dev("d-2", "first"))
		st.DeleteDevice(ctx, alice.ID, "d-2")
		if _, err := st.Register(ctx, alice, dev("d-2", "second")); !errors.Is(err, ErrKeyConflict) {
			t.Fatalf("tombstone lost: %v", err)
		}
	})
}

func TestContractDeleteAccountKeepsTombstones(t *testing.T) {
	forEachStore(t, func(t *testing.T, st *Store) {
		ctx := context.Background()
		mustRegister(t, st, alice, dev("laptop", "k1"))
		mustRegister(t, st, alice, dev("phone", "k2"))
		if err := st.AddPushToken(ctx, alice.ID, "phone", "android", "t1"); err != nil {
			t.Fatal(err)
		}
		if err := st.DeleteAccount(ctx, alice.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Account(ctx, alice.ID); !errors.Is(err, sql.ErrNoRows) {
			t.Fatalf("account kept: %v", err)
		}
		ds, _ := st.Devices(ctx, alice.ID)
		ps, _ := st.PushTokens(ctx, alice.ID)
		if len(ds) != 0 || len(ps) != 0 {
			t.Fatalf("left behind: %v %v", ds, ps)
		}
		if _, err := st.Register(ctx, alice, dev("Phone", "attacker")); !errors.Is(err, ErrKeyConflict) {
			t.Fatalf("a removed account's id went to another key: %v", err)
		}
		mustRegister(t, st, alice, dev("phone", "k2"))
	})
}

// An invite made before an account's deletion dies with it: before, it
// signed in afterwards and made the account again.
func TestContractDeleteAccountTakesItsInvites(t *testing.T) {
	forEachStore(t, func(t *testing.T, st *Store) {
		ctx := context.Background()
		code, err := st.CreateInvite(ctx, "pend")
		if err != nil {
			t.Fatal(err)
		}
		if err := st.DeleteAccount(ctx, "inv:pend"); err != nil {
			t.Fatal(err)
		}
		if _, _, err := st.RegisterInvite(ctx, code, dev("phone", "k")); !errors.Is(err, ErrBadInvite) {
			t.Fatalf("an invite outlived its account's deletion: %v", err)
		}
	})
}

func TestContractPushTokens(t *testing.T) {
	forEachStore(t, func(t *testing.T, st *Store) {
		ctx := context.Background()
		now := clock(st)
		mustRegister(t, st, alice, dev("phone", "k"))
		add := func(platform, token string) {
			t.Helper()
			*now = now.Add(time.Second)
			if err := st.AddPushToken(ctx, alice.ID, "phone", platform, token); err != nil {
				t.Fatal(err)
			}
		}
		add("android", "t1")
		add("android", "t2")
		add("ios", "i1")
		add("android", "t3")
		add("android", "t1") // refreshed: now the newest
		add("android", "t4") // the oldest, t2, goes
		got, err := st.PushTokens(ctx, alice.ID)
		if err != nil {
			t.Fatal(err)
		}
		want := []PushToken{{"phone", "ios", "i1"}, {"phone", "android", "t3"}, {"phone", "android", "t1"}, {"phone", "android", "t4"}}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("tokens %v, want %v", got, want)
		}
		st.DeleteDevice(ctx, alice.ID, "phone")
		if got, _ := st.PushTokens(ctx, alice.ID); len(got) != 0 {
			t.Fatalf("tokens outlived their device: %v", got)
		}
	})
}

func TestContractHostSeenAndOrder(t *testing.T) {
	forEachStore(t, func(t *testing.T, st *Store) {
		ctx := context.Background()
		now := clock(st)
		for _, id := range []string{"zeta", "Alpha", "beta"} { // registration order, not id order
			*now = now.Add(time.Millisecond)
			mustRegister(t, st, alice, dev(id, "k"))
		}
		if err := st.SetHost(ctx, alice.ID, "Alpha", true); err != nil {
			t.Fatal(err)
		}
		*now = now.Add(time.Minute)
		if err := st.Seen(ctx, alice.ID, "beta"); err != nil {
			t.Fatal(err)
		}
		ds, err := st.Devices(ctx, alice.ID)
		if err != nil || len(ds) != 3 {
			t.Fatalf("devices %v %v", ds, err)
		}
		got := fmt.Sprintf("%s %v %s %v %s %v", ds[0].ID, ds[0].Host, ds[1].ID, ds[1].Host, ds[2].ID, ds[2].LastSeen == now.UnixMilli())
		if got != "zeta false Alpha true beta true" {
			t.Fatalf("devices read %q", got)
		}
		st.SetHost(ctx, alice.ID, "Alpha", false)
		if ds, _ := st.Devices(ctx, alice.ID); ds[1].Host {
			t.Fatal("host not cleared")
		}
		// Same millisecond: ids in byte order on both databases (upper case first).
		for _, id := range []string{"b", "a", "B"} {
			mustRegister(t, st, relay.Account{ID: "gh:2", Login: "bob"}, dev(id, "k"))
		}
		ds, _ = st.Devices(ctx, "gh:2")
		if got := fmt.Sprintf("%s %s %s", ds[0].ID, ds[1].ID, ds[2].ID); got != "B a b" {
			t.Fatalf("same-time order %q", got)
		}
	})
}

func TestContractHit(t *testing.T) {
	forEachStore(t, func(t *testing.T, st *Store) {
		ctx := context.Background()
		now := clock(st)
		hit := func(key string, window time.Duration) bool {
			t.Helper()
			ok, err := st.Hit(ctx, key, 3, window)
			if err != nil {
				t.Fatal(err)
			}
			return ok
		}
		for i := range 3 {
			if !hit("signin:1.2.3.4", time.Minute) {
				t.Fatalf("hit %d refused", i+1)
			}
		}
		if hit("signin:1.2.3.4", time.Minute) {
			t.Fatal("4th hit of 3 allowed")
		}
		if !hit("signin:5.6.7.8", time.Minute) || !hit("other:1.2.3.4", time.Hour) {
			t.Fatal("keys share a count")
		}
		*now = now.Truncate(time.Minute).Add(time.Minute) // the next window
		if !hit("signin:1.2.3.4", time.Minute) {
			t.Fatal("a new window still counts the old one")
		}
		// The old minute windows go at the next sweep; the hour's stays.
		*now = now.Add(pruneEvery)
		hit("signin:1.2.3.4", time.Minute)
		var rows int
		if err := st.db.QueryRowContext(ctx, `SELECT count(*) FROM rate_hits`).Scan(&rows); err != nil || rows != 2 {
			t.Fatalf("%d rows kept (%v), want the live minute and the hour", rows, err)
		}
		for _, bad := range []struct {
			key    string
			limit  int
			window time.Duration
		}{{"", 1, time.Minute}, {string(make([]byte, maxHitKey+1)), 1, time.Minute}, {"k", 0, time.Minute}, {"k", 1, 0}} {
			if _, err := st.Hit(ctx, bad.key, bad.limit, bad.window); !errors.Is(err, ErrBadCounter) {
				t.Errorf("Hit(%d bytes, %d, %v): %v", len(bad.key), bad.limit, bad.window, err)
			}
		}
	})
}

// concurrently runs f n times at once and returns each call's error.
func concurrently(n int, f func(i int) error) []error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			errs[i] = f(i)
		})
	}
	close(start)
	wg.Wait()
	return errs
}

// count tallies errors: nil, the sentinels given, and anything else.
func count(errs []error, sentinels ...error) map[string]int {
	out := map[string]int{}
	for _, err := range errs {
		key := "other: " + fmt.Sprint(err)
		if err == nil {
			key = "ok"
		}
		for _, s := range sentinels {
			if errors.Is(err, s) {
				key = s.Error()
			}
		}
		out[key]++
	}
	return out
}

// Several relay nodes register devices on one new account at once: exactly
// MaxDevices get in.
func TestContractConcurrentRegistrations(t *testing.T) {
	forEachStore(t, func(t *testing.T, st *Store) {
		ctx := context.Background()
		errs := concurrently(20, func(i int) error {
			_, err := st.Register(ctx, alice, dev(fmt.Sprint("d", i), "k"))
			return err
		})
		got := count(errs, ErrTooManyDevices)
		if got["ok"] != MaxDevices || got[ErrTooManyDevices.Error()] != 20-MaxDevices {
			t.Fatalf("registrations: %v", got)
		}
		if ds, _ := st.Devices(ctx, alice.ID); len(ds) != MaxDevices {
			t.Fatalf("%d devices stored", len(ds))
		}
	})
}

// One invite spent by ten registrations at once: one gets in.
func TestContractConcurrentInvite(t *testing.T) {
	forEachStore(t, func(t *testing.T, st *Store) {
		ctx := context.Background()
		code, err := st.CreateInvite(ctx, "team")
		if err != nil {
			t.Fatal(err)
		}
		errs := concurrently(10, func(i int) error {
			_, _, err := st.RegisterInvite(ctx, code, dev(fmt.Sprint("d", i), "k"))
			return err
		})
		if got := count(errs, ErrBadInvite); got["ok"] != 1 || got[ErrBadInvite.Error()] != 9 {
			t.Fatalf("invite spends: %v", got)
		}
		if ds, _ := st.Devices(ctx, "inv:team"); len(ds) != 1 {
			t.Fatalf("%d devices stored", len(ds))
		}
	})
}

// Hits from many connections at once each get their own count.
func TestContractConcurrentHit(t *testing.T) {
	forEachStore(t, func(t *testing.T, st *Store) {
		ctx := context.Background()
		clock(st)
		var mu sync.Mutex
		allowed := 0
		errs := concurrently(40, func(int) error {
			ok, err := st.Hit(ctx, "signin:1.2.3.4", 15, time.Minute)
			if ok {
				mu.Lock()
				allowed++
				mu.Unlock()
			}
			return err
		})
		if got := count(errs); got["ok"] != 40 || allowed != 15 {
			t.Fatalf("hits: %v, %d allowed", got, allowed)
		}
		var n int
		if err := st.db.QueryRowContext(ctx, `SELECT n FROM rate_hits`).Scan(&n); err != nil || n != 40 {
			t.Fatalf("counted %d (%v)", n, err)
		}
	})
}

// A database from a newer gatehouse is refused, not guessed at.
func TestStoreRefusesNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "relay.db")
	st, err := OpenStore(path)
	if err != nil {
		t.Fatal(err)
	}
	st.db.Exec(`PRAGMA user_version = 99`)
	st.Close()
	if _, err := OpenStore(path); !errors.Is(err, ErrNewerSchema) {
		t.Fatalf("sqlite: %v", err)
	}
	ctx := context.Background()
	url := pgtest.Start(t)
	st, err = OpenPostgres(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	st.db.Exec(`UPDATE schema_version SET version = 99`)
	st.Close()
	if _, err := OpenPostgres(ctx, url); !errors.Is(err, ErrNewerSchema) {
		t.Fatalf("postgres: %v", err)
	}
}

// Relay nodes started together on a new database: the migration lock makes
// them take turns, so each opens a complete schema and none fails on
// another's half-made tables.
func TestStorePostgresNodesMigrateTogether(t *testing.T) {
	url := pgtest.Start(t)
	ctx := context.Background()
	errs := concurrently(6, func(int) error {
		st, err := OpenPostgres(ctx, url)
		if err == nil {
			err = st.Close()
		}
		return err
	})
	if got := count(errs); got["ok"] != 6 {
		t.Fatalf("opens: %v", got)
	}
	st, err := OpenPostgres(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var version, rows int
	st.db.QueryRowContext(ctx, `SELECT version, (SELECT count(*) FROM schema_version) FROM schema_version`).Scan(&version, &rows)
	if version != len(pgMigrations) || rows != 1 {
		t.Fatalf("schema version %d in %d rows", version, rows)
	}
}

// releasedPostgres pins PostgreSQL's released migrations, as released
// does SQLite's. Add a migration; never change these.
var releasedPostgres = []string{
	"92ab265314f4b6107d9a773a7abdd6d043b9826f5aac5d5caa71f0fa5e43b196",
	"25129e868b2097eb0af96a8f2bc082ce6d86d07745c2c58dfbb1292b91940a39", // tombstones
	"50910a510e36613dea466951e293dd66289b482913582a9f85064feab2d5568b", // rate_hits: limits shared by the relay's nodes
}

func TestPostgresMigrationsAreAppendOnly(t *testing.T) {
	checkPinned(t, "postgres", pgMigrations, releasedPostgres)
	// One for each of SQLite's: the two schemas move together.
	if len(pgMigrations) != len(migrations) {
		t.Fatalf("%d postgres migrations for %d sqlite ones", len(pgMigrations), len(migrations))
	}
}

func TestStoreRebindsPlaceholders(t *testing.T) {
	pg := &Store{dialect: postgresDialect}
	if got := pg.q(`a = ? AND b IN (?, ?)`); got != `a = $1 AND b IN ($2, $3)` {
		t.Fatalf("postgres: %s", got)
	}
	lite := &Store{dialect: sqliteDialect}
	if got := lite.q(`a = ?`); got != `a = ?` {
		t.Fatalf("sqlite: %s", got)
	}
}

// Why register upserts the account row first, on PostgreSQL: without that
// lock, two nodes each count 9 devices and each add one (the attack: 11
// devices); with it, the second node waits for the first to commit before
// it counts.
func TestStorePostgresDeviceLimitNeedsTheAccountLock(t *testing.T) {
	ctx := context.Background()
	st, err := OpenPostgres(ctx, pgtest.Start(t))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for i := range MaxDevices - 1 {
		mustRegister(t, st, alice, dev(fmt.Sprint("d", i), "k"))
	}
	countThenInsert := func(tx *sql.Tx, id string) {
		t.Helper()
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM devices WHERE account_id = $1`, alice.ID).Scan(&n); err != nil || n >= MaxDevices {
			t.Fatalf("count %d %v", n, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO devices (account_id, id, name, platform, public_key, gen, registered_at) VALUES ($1, $2, 'x', 'cli', 'k', 'g', 0)`, alice.ID, id); err != nil {
			t.Fatal(err)
		}
	}
	// Without the lock: both count 9, both insert.
	tx1, _ := st.db.BeginTx(ctx, nil)
	tx2, _ := st.db.BeginTx(ctx, nil)
	countThenInsert(tx1, "race1")
	countThenInsert(tx2, "race2")
	if err := errors.Join(tx1.Commit(), tx2.Commit()); err != nil {
		t.Fatal(err)
	}
	if ds, _ := st.Devices(ctx, alice.ID); len(ds) != MaxDevices+1 {
		t.Fatalf("the race without the lock left %d devices; the attack did not reproduce", len(ds))
	}
	st.DeleteDevice(ctx, alice.ID, "race2")
	st.DeleteDevice(ctx, alice.ID, "race1")
	// With it: the second upsert waits while the first transaction is open.
	tx1, _ = st.db.BeginTx(ctx, nil)
	defer tx1.Rollback()
	if err := st.ensureAccount(ctx, tx1, alice); err != nil {
		t.Fatal(err)
	}
	tx2, _ = st.db.BeginTx(ctx, nil)
	defer tx2.Rollback()
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if err := st.ensureAccount(short, tx2, alice); err == nil {
		t.Fatal("a second node's account upsert did not wait for the first node's registration")
	}
}
