package relayserver

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base32"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // the pure-Go SQLite driver, "sqlite"

	"github.com/gatehouse/gatehouse/relay"
)

// The relay keeps accounts, devices, invites and push tokens in one SQLite
// file (WAL, foreign keys on, so deleting an account or a device takes what
// hangs off it), or in a PostgreSQL database several relay nodes share
// (store_postgres.go). It never stores a frame: bodies pass through memory
// only.

// migrations are applied in order, once each; PRAGMA user_version counts
// them. Append only: an edited migration would leave existing relays
// different from new ones (a test pins the ones already released).
var migrations = []string{
	`CREATE TABLE accounts (
		id         TEXT PRIMARY KEY,
		login      TEXT NOT NULL,
		avatar_url TEXT NOT NULL DEFAULT '',
		created_at INTEGER NOT NULL
	);
	CREATE TABLE devices (
		account_id    TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
		id            TEXT NOT NULL,
		name          TEXT NOT NULL,
		platform      TEXT NOT NULL,
		public_key    TEXT NOT NULL,
		gen           TEXT NOT NULL,
		host          INTEGER NOT NULL DEFAULT 0,
		registered_at INTEGER NOT NULL,
		last_seen     INTEGER NOT NULL DEFAULT 0,
		PRIMARY KEY (account_id, id)
	);
	CREATE TABLE invites (
		hash       TEXT PRIMARY KEY,
		account_id TEXT NOT NULL,
		login      TEXT NOT NULL,
		expires_at INTEGER NOT NULL,
		used_at    INTEGER
	);
	CREATE TABLE push_tokens (
		account_id TEXT NOT NULL,
		device_id  TEXT NOT NULL,
		platform   TEXT NOT NULL,
		token      TEXT NOT NULL,
		created_at INTEGER NOT NULL,
		PRIMARY KEY (account_id, device_id, token),
		FOREIGN KEY (account_id, device_id) REFERENCES devices(account_id, id) ON DELETE CASCADE
	);`,
	// 2: tombstones. A removed device's id stays bound to its key, so no
	// other key can take it: a device of the account could otherwise remove
	// the host and sign in again under the host's id with its own key
	// (TestRemovedDeviceIDIsNeverGivenToAnotherKey). No foreign key: a
	// tombstone outlives its device and its account.
	`CREATE TABLE tombstones (
		account_id TEXT NOT NULL,
		device_id  TEXT NOT NULL,
		key_hash   TEXT NOT NULL,
		removed_at INTEGER NOT NULL,
		PRIMARY KEY (account_id, device_id)
	);`,
	// 3: rate_hits, the windowed counters of Hit, shared by every relay
	// node on one database. expires_at (the window's end) lets old windows
	// of any length go in one indexed DELETE.
	`CREATE TABLE rate_hits (
		key          TEXT NOT NULL,
		window_start INTEGER NOT NULL,
		expires_at   INTEGER NOT NULL,
		n            INTEGER NOT NULL,
		PRIMARY KEY (key, window_start)
	);
	CREATE INDEX rate_hits_expires ON rate_hits (expires_at);`,
}

// Limits the store enforces.
const (
	MaxDevices       = 10               // per account
	maxPushTokens    = 3                // per device and platform
	inviteLife       = 15 * time.Minute // an invite code's life
	maxInviteAccount = 64               // bytes of an invite's account name
)

var (
	// ErrKeyConflict: the device id is registered with another key (409).
	ErrKeyConflict = errors.New("relay: this device id is registered with a different key")
	// ErrTooManyDevices: the account already has MaxDevices devices.
	ErrTooManyDevices = errors.New("relay: the account has too many devices")
	// ErrBadInvite: the code is unknown, used or expired.
	ErrBadInvite = errors.New("relay: invite code refused")
)

// PushToken is a phone's push registration.
type PushToken struct {
	Device   string
	Platform string
	Token    string
}

// Store is the relay's database: SQLite for one node (OpenStore), or
// PostgreSQL shared by several (OpenPostgres). The queries are one code
// path, written for both; dialect holds what differs.
type Store struct {
	db      *sql.DB
	dialect dialect
	now     func() time.Time
	pruned  atomic.Int64 // unix ms of Hit's last sweep of old windows
}

// OpenStore opens (creating it if needed) the database at path and brings
// its schema up to date.
//
// Every file of the database (the file, its -wal and -shm) is 0600, whatever
// the folder's mode and the umask: an existing --data folder may be open to
// others, and the database names every account and device. SQLite makes the
// -wal and -shm with the database file's mode, so that mode is set first and
// the others are checked after the first write.
func OpenStore(path string) (*Store, error) {
	if err := ownerOnly(path, true); err != nil {
		return nil, err
	}
	dsn := "file:" + path + "?_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_pragma=busy_timeout(5000)&_pragma=synchronous(NORMAL)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1) // rows are tiny; one connection serializes writers without SQLITE_BUSY
	s := &Store{db: db, dialect: sqliteDialect, now: time.Now}
	if err := migrateSQLite(context.Background(), db); err != nil {
		db.Close()
		return nil, err
	}
	for _, f := range []string{path + "-wal", path + "-shm"} {
		if err := ownerOnly(f, false); err != nil {
			db.Close()
			return nil, err
		}
	}
	return s, nil
}

// ownerOnly makes the file at path 0600, creating it (empty) when create is
// set and it is missing. A missing file that is not to be created is fine.
func ownerOnly(path string, create bool) error {
	if err := checkOwnFile(path); err != nil {
		return err
	}
	if create {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return fmt.Errorf("relay: database: %w", err)
		}
		f.Close()
	}
	err := os.Chmod(path, 0o600)
	if err != nil && !(errors.Is(err, os.ErrNotExist) && !create) {
		return fmt.Errorf("relay: database: %w", err)
	}
	return nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// Ping reports whether the database answers (the health check).
func (s *Store) Ping(ctx context.Context) error { return s.db.PingContext(ctx) }

// ErrNewerSchema: the database was migrated by a newer gatehouse, whose
// tables this one does not know; it refuses rather than guess.
var ErrNewerSchema = errors.New("relay: the database is from a newer gatehouse")

func newerSchema(version, known int) error {
	return fmt.Errorf("%w (schema %d, this one knows %d)", ErrNewerSchema, version, known)
}

// migrateSQLite applies the migrations db has not had yet, one
// transaction each; PRAGMA user_version counts them. One process owns a
// SQLite file, so nothing else migrates it at the same time.
func migrateSQLite(ctx context.Context, db *sql.DB) error {
	var version int
	if err := db.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&version); err != nil {
		return fmt.Errorf("relay: database: %w", err)
	}
	if version > len(migrations) {
		return newerSchema(version, len(migrations))
	}
	for i := version; i < len(migrations); i++ {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(migrations[i]); err != nil {
			tx.Rollback()
			return fmt.Errorf("relay: migration %d: %w", i+1, err)
		}
		if _, err := tx.Exec(fmt.Sprintf(`PRAGMA user_version = %d`, i+1)); err != nil {
			tx.Rollback()
			return err
		}
		if err := tx.Commit(); err != nil {
			return err
		}
	}
	return nil
}

// ensureAccount creates the account if it is new and refreshes its login
// and avatar otherwise.
//
// On PostgreSQL the upsert also locks the account's row until the
// transaction ends: registrations on one account from several relay nodes
// take turns, so the device count each one reads is the committed one and
// MaxDevices holds (READ COMMITTED reads afresh after the wait).
func (s *Store) ensureAccount(ctx context.Context, tx *sql.Tx, a relay.Account) error {
	_, err := tx.ExecContext(ctx, s.q(`INSERT INTO accounts (id, login, avatar_url, created_at) VALUES (?, ?, ?, ?)
		ON CONFLICT(id) DO UPDATE SET login = excluded.login, avatar_url = excluded.avatar_url`),
		a.ID, a.Login, a.AvatarURL, s.now().Unix())
	return err
}

// Register adds device d to account a (creating the account on its first
// device). The same id with the same key keeps its row (and gen) and
// takes the new name and platform; the same id with another key is
// ErrKeyConflict; an 11th device is ErrTooManyDevices.
func (s *Store) Register(ctx context.Context, a relay.Account, d relay.Device) (gen string, err error) {
	return s.register(ctx, &a, "", d)
}

// RegisterInvite spends an invite code and registers d on the account it
// names, in one transaction: a registration that fails (a 409, say) leaves
// the code unspent for the retry.
func (s *Store) RegisterInvite(ctx context.Context, code string, d relay.Device) (relay.Account, string, error) {
	var a relay.Account
	gen, err := s.register(ctx, &a, code, d)
	return a, gen, err
}

func (s *Store) register(ctx context.Context, a *relay.Account, invite string, d relay.Device) (gen string, err error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return "", err
	}
	defer func() {
		if err != nil {
			tx.Rollback()
		}
	}()
	if invite != "" {
		now := s.now().Unix()
		err = tx.QueryRowContext(ctx, s.q(`UPDATE invites SET used_at = ? WHERE hash = ? AND used_at IS NULL AND expires_at > ? RETURNING account_id, login`),
			now, inviteHash(invite), now).Scan(&a.ID, &a.Login)
		if errors.Is(err, sql.ErrNoRows) {
			return "", ErrBadInvite
		} else if err != nil {
			return "", err
		}
	}
	if err := s.ensureAccount(ctx, tx, *a); err != nil {
		return "", err
	}
	if err = s.checkTombstone(ctx, tx, a.ID, d); err != nil {
		return "", err
	}
	var key string
	err = tx.QueryRowContext(ctx, s.q(`SELECT public_key, gen FROM devices WHERE account_id = ? AND id = ?`), a.ID, d.ID).Scan(&key, &gen)
	switch {
	case err == nil && key != d.PublicKey:
		return "", ErrKeyConflict
	case err == nil:
		_, err = tx.ExecContext(ctx, s.q(`UPDATE devices SET name = ?, platform = ? WHERE account_id = ? AND id = ?`), d.Name, d.Platform, a.ID, d.ID)
	case errors.Is(err, sql.ErrNoRows):
		var n int
		if err = tx.QueryRowContext(ctx, s.q(`SELECT count(*) FROM devices WHERE account_id = ?`), a.ID).Scan(&n); err != nil {
			return "", err
		}
		if n >= MaxDevices {
			return "", ErrTooManyDevices
		}
		gen = randomText(16)
		_, err = tx.ExecContext(ctx, s.q(`INSERT INTO devices (account_id, id, name, platform, public_key, gen, registered_at) VALUES (?, ?, ?, ?, ?, ?, ?)`),
			a.ID, d.ID, d.Name, d.Platform, d.PublicKey, gen, s.now().UnixMilli())
	}
	if err != nil {
		return "", err
	}
	return gen, tx.Commit()
}

// Account returns an account by id.
func (s *Store) Account(ctx context.Context, id string) (relay.Account, error) {
	a := relay.Account{ID: id}
	err := s.db.QueryRowContext(ctx, s.q(`SELECT login, avatar_url FROM accounts WHERE id = ?`), id).Scan(&a.Login, &a.AvatarURL)
	return a, err
}

// Gen returns a device's gen; ok is false when the device is not
// registered, and err says the database did not answer. The difference
// matters: a device refused as unregistered signs out (401, close 4001),
// so an unreachable database must never look like a removed device.
func (s *Store) Gen(ctx context.Context, account, device string) (gen string, ok bool, err error) {
	err = s.db.QueryRowContext(ctx, s.q(`SELECT gen FROM devices WHERE account_id = ? AND id = ?`), account, device).Scan(&gen)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	return gen, err == nil, err
}

// Devices lists an account's devices (Online is the caller's to fill).
func (s *Store) Devices(ctx context.Context, account string) ([]relay.Device, error) {
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT id, name, platform, public_key, host, last_seen FROM devices WHERE account_id = ? ORDER BY registered_at, id`), account)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []relay.Device{}
	for rows.Next() {
		var d relay.Device
		if err := rows.Scan(&d.ID, &d.Name, &d.Platform, &d.PublicKey, &d.Host, &d.LastSeen); err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// checkTombstone refuses a removed device's id to any key but the one it
// had (ErrKeyConflict, the client's cue to make a new id). The same key may
// come back: removal is about the device, and the person whose device was
// removed by mistake signs it in again.
//
// Ids are compared without regard to letter case: an id that differs from a
// removed one only in case would look like it to a person reading a list
// (found by the red team: D-HOST… was given to another key after d-host…
// was removed).
func (s *Store) checkTombstone(ctx context.Context, tx *sql.Tx, account string, d relay.Device) error {
	rows, err := tx.QueryContext(ctx, s.q(`SELECT key_hash FROM tombstones WHERE account_id = ? AND lower(device_id) = lower(?)`), account, d.ID)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var hash string
		if err := rows.Scan(&hash); err != nil {
			return err
		}
		if hash != keyHash(d.PublicKey) {
			return ErrKeyConflict
		}
	}
	return rows.Err()
}

// DeleteDevice removes a device (its push tokens go with it) and keeps its
// tombstone. It reports whether there was one.
func (s *Store) DeleteDevice(ctx context.Context, account, device string) (bool, error) {
	return s.removeDevices(ctx, `WHERE account_id = ? AND id = ?`, account, device)
}

// DeleteAccount removes an account and everything it holds but its
// devices' tombstones: an account signed in again must not hand a removed
// id to another key either.
func (s *Store) DeleteAccount(ctx context.Context, account string) error {
	_, err := s.removeDevices(ctx, `WHERE account_id = ?`, account)
	if err != nil {
		return err
	}
	// Its unspent invites go too: "all state gone" (found by the red team:
	// an invite made before the deletion signed in after it and made the
	// account again).
	if _, err = s.db.ExecContext(ctx, s.q(`DELETE FROM invites WHERE account_id = ?`), account); err != nil {
		return err
	}
	_, err = s.db.ExecContext(ctx, s.q(`DELETE FROM accounts WHERE id = ?`), account)
	return err
}

// removeDevices tombstones then deletes the devices where selects, in one
// transaction, and reports whether there were any.
func (s *Store) removeDevices(ctx context.Context, where string, args ...any) (bool, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, s.q(`SELECT id, public_key FROM devices `+where), args...)
	if err != nil {
		return false, err
	}
	type dead struct{ id, key string }
	var list []dead
	for rows.Next() {
		var d dead
		if err := rows.Scan(&d.id, &d.key); err != nil {
			rows.Close()
			return false, err
		}
		list = append(list, d)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return false, err
	}
	account := args[0]
	for _, d := range list {
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO tombstones (account_id, device_id, key_hash, removed_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (account_id, device_id) DO UPDATE SET key_hash = excluded.key_hash, removed_at = excluded.removed_at`),
			account, d.id, keyHash(d.key), s.now().UnixMilli()); err != nil {
			return false, err
		}
	}
	if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM devices `+where), args...); err != nil {
		return false, err
	}
	return len(list) > 0, tx.Commit()
}

// keyHash is what a tombstone keeps of a key: its SHA-256, enough to
// recognise it, not to use it.
func keyHash(publicKey string) string {
	sum := sha256.Sum256([]byte(publicKey))
	return hex.EncodeToString(sum[:])
}

// SetHost records whether a device hosts.
func (s *Store) SetHost(ctx context.Context, account, device string, host bool) error {
	_, err := s.db.ExecContext(ctx, s.q(`UPDATE devices SET host = ? WHERE account_id = ? AND id = ?`), host, account, device)
	return err
}

// Seen records that a device was last connected now.
func (s *Store) Seen(ctx context.Context, account, device string) error {
	_, err := s.db.ExecContext(ctx, s.q(`UPDATE devices SET last_seen = ? WHERE account_id = ? AND id = ?`), s.now().UnixMilli(), account, device)
	return err
}

// CreateInvite makes a one-time sign-in code for the account named name:
// 128 random bits, stored hashed, valid for 15 minutes.
func (s *Store) CreateInvite(ctx context.Context, name string) (code string, err error) {
	if name == "" || len(name) > maxInviteAccount || !relay.ValidDeviceID(name) {
		return "", fmt.Errorf("relay: an account name is 1 to %d letters, digits, '.', '_' or '-'", maxInviteAccount)
	}
	code = randomText(16)
	_, err = s.db.ExecContext(ctx, s.q(`INSERT INTO invites (hash, account_id, login, expires_at) VALUES (?, ?, ?, ?)`),
		inviteHash(code), "inv:"+name, name, s.now().Add(inviteLife).Unix())
	return code, err
}

// AddPushToken registers a push token for a device, keeping at most three
// per platform (the oldest goes).
func (s *Store) AddPushToken(ctx context.Context, account, device, platform, token string) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO push_tokens (account_id, device_id, platform, token, created_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (account_id, device_id, token) DO UPDATE SET created_at = excluded.created_at`), account, device, platform, token, s.now().UnixNano()); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM push_tokens WHERE account_id = ? AND device_id = ? AND platform = ? AND token NOT IN
		(SELECT token FROM push_tokens WHERE account_id = ? AND device_id = ? AND platform = ? ORDER BY created_at DESC LIMIT ?)`),
		account, device, platform, account, device, platform, maxPushTokens); err != nil {
		return err
	}
	return tx.Commit()
}

// PushTokens lists an account's push tokens.
func (s *Store) PushTokens(ctx context.Context, account string) ([]PushToken, error) {
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT device_id, platform, token FROM push_tokens WHERE account_id = ? ORDER BY device_id, created_at`), account)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []PushToken
	for rows.Next() {
		var p PushToken
		if err := rows.Scan(&p.Device, &p.Platform, &p.Token); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

func inviteHash(code string) string {
	sum := sha256.Sum256([]byte(strings.ToUpper(strings.TrimSpace(code))))
	return hex.EncodeToString(sum[:])
}

// randomText is n random bytes as unpadded base32: easy to read aloud and type.
func randomText(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails since Go 1.24
	return base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b)
}

// dialect is what differs between the databases the store runs on.
type dialect struct {
	name string
	// numbered: the driver wants $1..$n where the shared SQL says ?.
	numbered bool
}

var (
	sqliteDialect   = dialect{name: "sqlite"}
	postgresDialect = dialect{name: "postgres", numbered: true}
)

// rebound caches each query's $n form: the queries are the store's own
// constants, so the cache is bounded by the source.
var rebound sync.Map

// q is query in the store's dialect. The store's SQL is its own and has no
// ? inside a literal, so every ? is an argument.
func (s *Store) q(query string) string {
	if !s.dialect.numbered {
		return query
	}
	if v, ok := rebound.Load(query); ok {
		return v.(string)
	}
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r != '?' {
			b.WriteRune(r)
			continue
		}
		n++
		fmt.Fprintf(&b, "$%d", n)
	}
	v, _ := rebound.LoadOrStore(query, b.String())
	return v.(string)
}

// Limits of Hit's counters.
const (
	maxHitKey  = 256         // bytes of a counter's key
	pruneEvery = time.Minute // how often a store sweeps ended windows
)

// ErrBadCounter: Hit was asked for an empty or overlong key, or a limit or
// window below one.
var ErrBadCounter = errors.New("relay: bad rate counter")

// Hit counts one hit for key in the current fixed window (now truncated to
// window) and reports whether the window's count is still within limit. It
// is one statement, so hits from several relay nodes on one database each
// get their own count. Windows that have ended are deleted at most once a
// pruneEvery per store, so the table holds the live windows and a minute
// of ended ones.
//
// A caller uses one window length per key (put the limit's name in the
// key): the count is kept per key and window start.
func (s *Store) Hit(ctx context.Context, key string, limit int, window time.Duration) (allowed bool, err error) {
	if key == "" || len(key) > maxHitKey || limit < 1 || window < time.Millisecond {
		return false, fmt.Errorf("%w: key of %d bytes, limit %d, window %v", ErrBadCounter, len(key), limit, window)
	}
	now := s.now()
	start := now.Truncate(window)
	var n int
	err = s.db.QueryRowContext(ctx, s.q(`INSERT INTO rate_hits (key, window_start, expires_at, n) VALUES (?, ?, ?, 1)
		ON CONFLICT (key, window_start) DO UPDATE SET n = rate_hits.n + 1 RETURNING n`),
		key, start.UnixMilli(), start.Add(window).UnixMilli()).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("relay: rate counter: %w", err)
	}
	if err := s.pruneHits(ctx, now); err != nil {
		return false, err
	}
	return n <= limit, nil
}

// pruneHits deletes the windows that ended, when this store has not done
// so for pruneEvery. Several nodes each sweep on their own clock; a sweep
// that finds nothing costs one indexed range.
func (s *Store) pruneHits(ctx context.Context, now time.Time) error {
	last := s.pruned.Load()
	if now.UnixMilli()-last < pruneEvery.Milliseconds() || !s.pruned.CompareAndSwap(last, now.UnixMilli()) {
		return nil
	}
	if _, err := s.db.ExecContext(ctx, s.q(`DELETE FROM rate_hits WHERE expires_at <= ?`), now.UnixMilli()); err != nil {
		return fmt.Errorf("relay: rate counter sweep: %w", err)
	}
	return nil
}
