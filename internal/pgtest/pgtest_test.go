package pgtest

import (
	"context"
	"database/sql"
	"os"
	"testing"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

// Two tests get two databases on one server: what one writes the other
// does not see.
func TestStartGivesEachTestItsOwnDatabase(t *testing.T) {
	a, b := Start(t), Start(t)
	if a == b {
		t.Fatalf("one URL twice: %s", a)
	}
	ctx := context.Background()
	dbA := open(t, a)
	if _, err := dbA.ExecContext(ctx, `CREATE TABLE x (n INTEGER)`); err != nil {
		t.Fatal(err)
	}
	var n int
	err := open(t, b).QueryRowContext(ctx, `SELECT count(*) FROM information_schema.tables WHERE table_name = 'x'`).Scan(&n)
	if err != nil || n != 0 {
		t.Fatalf("the second database sees the first's table: %d %v", n, err)
	}
}

// Without Main, Start runs a server for the one test and stops it in the
// test's cleanup: its folder is gone afterwards (leakcheck, through Main,
// then proves no process outlived it).
func TestStartWithoutMainStopsItsServer(t *testing.T) {
	bin, err := findBin()
	if err != nil {
		t.Skip(err)
	}
	srv, err := startServer(bin)
	if err != nil {
		t.Fatal(err)
	}
	url, err := srv.createDatabase()
	if err != nil {
		t.Fatal(err)
	}
	db := open(t, url)
	if err := db.Ping(); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if err := srv.stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(srv.dir); !os.IsNotExist(err) {
		t.Fatalf("the server's folder is still there: %v", err)
	}
	select {
	case <-srv.exited:
	default:
		t.Fatal("postgres still runs after stop")
	}
}

func open(t *testing.T, url string) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
