package relayserver

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
)

// PostgreSQL is the store several relay nodes share; SQLite stays the
// store of one node. The queries are the same (store.go, written for
// both); the schema is its own list below, BIGINT for every time and a
// BOOLEAN host, with the same tables, keys and cascades as SQLite's.
//
// Text keys are COLLATE "C": SQLite compares and sorts bytes, and a
// database made with a language's collation would order Devices (and
// compare ids) differently from it.

// pgMigrations are PostgreSQL's migrations, one for each of SQLite's, in
// the same order. Append only, as with SQLite's (a test pins them).
var pgMigrations = []string{
	`CREATE TABLE accounts (
		id         TEXT COLLATE "C" PRIMARY KEY,
		login      TEXT NOT NULL,
		avatar_url TEXT NOT NULL DEFAULT '',
		created_at BIGINT NOT NULL
	);
	CREATE TABLE devices (
		account_id    TEXT COLLATE "C" NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
		id            TEXT COLLATE "C" NOT NULL,
		name          TEXT NOT NULL,
		platform      TEXT NOT NULL,
		public_key    TEXT NOT NULL,
		gen           TEXT NOT NULL,
		host          BOOLEAN NOT NULL DEFAULT FALSE,
		registered_at BIGINT NOT NULL,
		last_seen     BIGINT NOT NULL DEFAULT 0,
		PRIMARY KEY (account_id, id)
	);
	CREATE TABLE invites (
		hash       TEXT COLLATE "C" PRIMARY KEY,
		account_id TEXT COLLATE "C" NOT NULL,
		login      TEXT NOT NULL,
		expires_at BIGINT NOT NULL,
		used_at    BIGINT
	);
	CREATE TABLE push_tokens (
		account_id TEXT COLLATE "C" NOT NULL,
		device_id  TEXT COLLATE "C" NOT NULL,
		platform   TEXT NOT NULL,
		token      TEXT COLLATE "C" NOT NULL,
		created_at BIGINT NOT NULL,
		PRIMARY KEY (account_id, device_id, token),
		FOREIGN KEY (account_id, device_id) REFERENCES devices(account_id, id) ON DELETE CASCADE
	);`,
	// 2: tombstones, as SQLite's 2 (store.go says why).
	`CREATE TABLE tombstones (
		account_id TEXT COLLATE "C" NOT NULL,
		device_id  TEXT COLLATE "C" NOT NULL,
		key_hash   TEXT NOT NULL,
		removed_at BIGINT NOT NULL,
		PRIMARY KEY (account_id, device_id)
	);`,
	// 3: rate_hits, Hit's counters, as SQLite's 3.
	`CREATE TABLE rate_hits (
		key          TEXT COLLATE "C" NOT NULL,
		window_start BIGINT NOT NULL,
		expires_at   BIGINT NOT NULL,
		n            INTEGER NOT NULL,
		PRIMARY KEY (key, window_start)
	);
	CREATE INDEX rate_hits_expires ON rate_hits (expires_at);`,
}

// migrationLock is the pg_advisory_xact_lock key every relay node takes
// before it reads or changes the schema: nodes started together on one
// database migrate one after another, and each sees what the one before it
// did. (The bytes of "gatehous"; advisory locks are per database.)
const migrationLock = 0x67617465686f7573

// pgMaxConns bounds one node's connections: PostgreSQL allows 100 by
// default across every node and every other client.
const pgMaxConns = 16

// OpenPostgres opens the PostgreSQL database at url (a pgx URL or DSN),
// checks that it answers, and brings its schema up to date. Several relay
// nodes may open one database at once.
func OpenPostgres(ctx context.Context, url string) (*Store, error) {
	db, err := sql.Open("pgx", url)
	if err != nil {
		return nil, fmt.Errorf("relay: database: %w", err)
	}
	db.SetMaxOpenConns(pgMaxConns)
	db.SetConnMaxIdleTime(5 * time.Minute)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("relay: database: %w", err)
	}
	if err := migratePostgres(ctx, db); err != nil {
		db.Close()
		return nil, err
	}
	return &Store{db: db, dialect: postgresDialect, now: time.Now}, nil
}

// migratePostgres applies the migrations the database has not had yet,
// one transaction each, under the migration lock.
func migratePostgres(ctx context.Context, db *sql.DB) error {
	for {
		done, err := migrateOnePostgres(ctx, db)
		if err != nil || done {
			return err
		}
	}
}

// migrateOnePostgres applies the next migration, if there is one, and
// reports whether the schema is now current. The version lives in
// schema_version and changes in the migration's own transaction: a
// migration and its number commit together or not at all.
func migrateOnePostgres(ctx context.Context, db *sql.DB) (done bool, err error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("relay: database: %w", err)
	}
	defer tx.Rollback()
	version, err := lockedSchemaVersion(ctx, tx)
	if err != nil {
		return false, err
	}
	if version > len(pgMigrations) {
		return false, newerSchema(version, len(pgMigrations))
	}
	if version == len(pgMigrations) {
		return true, nil
	}
	if _, err := tx.ExecContext(ctx, pgMigrations[version]); err != nil {
		return false, fmt.Errorf("relay: migration %d: %w", version+1, err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE schema_version SET version = $1`, version+1); err != nil {
		return false, fmt.Errorf("relay: migration %d: %w", version+1, err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("relay: migration %d: %w", version+1, err)
	}
	return version+1 == len(pgMigrations), nil
}

// lockedSchemaVersion takes the migration lock for tx's life and returns
// the schema's version, making the table (at 0) on a new database.
func lockedSchemaVersion(ctx context.Context, tx *sql.Tx) (int, error) {
	steps := []string{
		`SELECT pg_advisory_xact_lock(` + fmt.Sprint(migrationLock) + `)`,
		// One row, which "one" keeps single.
		`CREATE TABLE IF NOT EXISTS schema_version (
			one     BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (one),
			version INTEGER NOT NULL
		)`,
		`INSERT INTO schema_version (version) VALUES (0) ON CONFLICT (one) DO NOTHING`,
	}
	for _, q := range steps {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return 0, fmt.Errorf("relay: database: %w", err)
		}
	}
	var version int
	if err := tx.QueryRowContext(ctx, `SELECT version FROM schema_version`).Scan(&version); err != nil {
		return 0, fmt.Errorf("relay: database: %w", err)
	}
	return version, nil
}
