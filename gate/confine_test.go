//go:build linux

package gate

import (
	"bufio"
	"bytes"
	"compress/flate"
	"context"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/adler32"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/fsguard"
	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/internal/refusal"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// needWall skips where the kernel has no Landlock, or fails there when the
// run requires it (GATEHOUSE_REQUIRE=landlock, internal/testenv); it fails
// where the kernel claims Landlock and the self-test found it not enforced.
// A run with the wall switched off on purpose skips.
func needWall(t *testing.T) {
	t.Helper()
	st := wallState(gitPath(t), nil)
	if st.broken != nil {
		t.Fatalf("the kernel wall is broken here: %v", st.broken)
	}
	testenv.Require(t, "landlock", st.abi > 0, "no Landlock on this kernel")
	if kernelWallIsOff() {
		t.Skip("the kernel wall is off in this run (GATEHOUSE_KERNEL_WALL=off)")
	}
}

func gitPath(t testing.TB) string {
	t.Helper()
	p, err := gitBinary(Options{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// openWith opens dir with opts (Served and Timeout filled in).
func openWith(t *testing.T, dir string, opts Options) *Repo {
	t.Helper()
	root, err := fsguard.OpenRoot(dir, fsguard.Options{Home: "/nonexistent-home"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	canon, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	opts.Served = []string{canon}
	if opts.Timeout == 0 {
		opts.Timeout = 20 * time.Second
	}
	r, err := Open(root, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func TestWallSelfTestPasses(t *testing.T) {
	gittest.Home(t, "")
	needWall(t)
	rep := Walls("", Options{})
	if !rep.Enforced || !strings.HasPrefix(rep.Landlock, "ABI ") {
		t.Fatalf("report %+v", rep)
	}
	t.Logf("landlock: %s; memory: %s", rep.Landlock, rep.Memory)
}

// outsideTarget is a file outside the checkout that a symlink in .git
// leads to.
func outsideTarget(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "outside.txt")
	if err := os.WriteFile(p, []byte("untouched\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// stagedWithLink is a checkout with a staged change and .git/name a
// symlink to a file outside.
func stagedWithLink(t *testing.T, name string) (dir, outside string) {
	t.Helper()
	dir = gittest.Init(t, nil)
	git(t, dir, "commit", "-q", "--allow-empty", "-m", "second") // logs/HEAD exists
	write(t, dir, map[string]string{"b.txt": "b\n"})
	git(t, dir, "add", "b.txt")
	outside = outsideTarget(t)
	link := filepath.Join(dir, ".git", name)
	if err := os.Remove(link); err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	return dir, outside
}

var commitCall = call{sub: subCommit, opts: []string{"-q", "-m", "from the phone"}}

// The second wall alone: a symlink inside .git leads a commit's writes
// outside the checkout. Git follows it (the attack works, desktop); the
// closed gate's git, confined by the kernel, cannot. The runner is called
// directly, so no shape check of .git takes part.
func TestWallStopsWritesThroughSymlinksInGitDir(t *testing.T) {
	gittest.Home(t, "")
	needWall(t)
	for _, name := range []string{"COMMIT_EDITMSG", "logs/HEAD"} {
		t.Run(name, func(t *testing.T) {
			dir, outside := stagedWithLink(t, name)
			if _, err := open(t, dir).run(ctx, desktop, openDecision, commitCall); err != nil {
				t.Fatal(err)
			}
			if read(t, outside) == "untouched\n" {
				t.Fatalf("not reproduced: git did not write through .git/%s", name)
			}
			dir, outside = stagedWithLink(t, name)
			_, err := open(t, dir).run(ctx, closed, openDecision, commitCall)
			if got := read(t, outside); got != "untouched\n" {
				t.Fatalf("the closed gate's git wrote outside through .git/%s: %q", name, got)
			}
			t.Logf("closed commit: %v", err)
		})
	}
}

// The same for reads: .git/objects/pack leads to another repository's
// packs, and git would show its objects.
func TestWallStopsReadsThroughSymlinkedPacks(t *testing.T) {
	gittest.Home(t, "")
	needWall(t)
	other := gittest.Init(t, map[string]string{"secret.txt": "SECRET-7f3a\n"})
	git(t, other, "gc", "-q")
	oid := strings.TrimSpace(git(t, other, "rev-parse", "HEAD:secret.txt"))
	build := func() string {
		dir := gittest.Init(t, nil)
		pack := filepath.Join(dir, ".git", "objects", "pack")
		if err := os.RemoveAll(pack); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(other, ".git", "objects", "pack"), pack); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	show := call{sub: subShow, args: []string{oid}}
	res, err := open(t, build()).run(ctx, desktop, openDecision, show)
	if err != nil || !strings.Contains(string(res.stdout), "SECRET-7f3a") {
		t.Fatalf("not reproduced: %v %q", err, res.stdout)
	}
	res, err = open(t, build()).run(ctx, closed, openDecision, show)
	if err == nil || strings.Contains(string(res.stdout), "SECRET") {
		t.Fatalf("the closed gate's git read another repository's pack: %v %q", err, res.stdout)
	}
}

// Nothing runs from the checkout or from anywhere else the closed call has
// no business with: here a program forced in past every gate (the call's
// own -c comes last) is refused by the kernel.
func TestWallRunsNoProgram(t *testing.T) {
	gittest.Home(t, "")
	needWall(t)
	for _, where := range []string{"in the checkout", "outside"} {
		t.Run(where, func(t *testing.T) {
			build := func() (string, string, string) {
				dir := gittest.Init(t, nil)
				prog, marker := gittest.PayloadFile(t)
				if where == "in the checkout" {
					inside := filepath.Join(dir, "tool.sh")
					data, err := os.ReadFile(prog)
					if err != nil {
						t.Fatal(err)
					}
					write(t, dir, map[string]string{"tool.sh": string(data)})
					if err := os.Chmod(inside, 0o755); err != nil {
						t.Fatal(err)
					}
					prog = inside
				}
				return dir, prog, marker
			}
			fsmon := func(prog string) call {
				return call{sub: subStatus, config: []Option{{"core.fsmonitor", prog, "test"}}, opts: []string{"--porcelain=v2"}}
			}
			dir, prog, marker := build()
			_, _ = open(t, dir).run(ctx, desktop, openDecision, fsmon(prog))
			if !gittest.Fired(marker) {
				t.Fatal("not reproduced: the desktop's status did not run core.fsmonitor")
			}
			dir, prog, marker = build()
			_, _ = open(t, dir).run(ctx, closed, openDecision, fsmon(prog))
			if gittest.Fired(marker) {
				t.Fatal("a closed git child ran a program")
			}
		})
	}
}

// A call that needs no network has no TCP at all; a push or fetch keeps it.
func TestWallNoNetworkForLocalCalls(t *testing.T) {
	gittest.Home(t, "")
	needWall(t)
	testenv.Require(t, "landlock", landlock() >= 4, fmt.Sprintf("Landlock ABI %d has no network rules (4 has)", landlock()))
	base := t.TempDir()
	git(t, "", "init", "-q", "--bare", filepath.Join(base, "remote.git"))
	url := gittest.Daemon(t, base) + "remote.git"
	dir := gittest.Init(t, nil)
	lsRemote := func(network bool) call {
		return call{sub: sub{name: "ls-remote", network: network, readOnly: !network, timeout: 10 * time.Second, maxOut: 1 << 20}, args: []string{url}}
	}
	if _, err := open(t, dir).run(ctx, closed, openDecision, lsRemote(true)); err != nil {
		t.Fatalf("a network call could not reach the remote: %v", err)
	}
	_, err := open(t, dir).run(ctx, closed, openDecision, lsRemote(false))
	var ee *ExitError
	if !errors.As(err, &ee) || !strings.Contains(ee.Stderr, "Permission denied") {
		t.Fatalf("a local call reached the network: %v", err)
	}
}

// hugeCommit writes a loose commit whose message inflates to size bytes of
// one letter (a few MB on disk), and points the branch at it.
//
// Deflating 3 GiB in Go took four minutes under the race detector, most of
// this package's test time. So one MiB of the message is deflated once and
// its blocks are written again and again: deflate's back-references are
// relative and reach only into that MiB (RFC 1951, 3.2.5), and each piece
// ends on a byte boundary (a sync flush), so the repeats inflate to the same
// bytes. zlib's checksum of the whole is combined from the pieces' as zlib's
// adler32_combine does (zlib's adler32.c); git checks it at the end of every
// inflate. TestHugeCommitIsAValidObject has git read a small one back.
func hugeCommit(t *testing.T, dir string, size int64) {
	t.Helper()
	tree := strings.TrimSpace(git(t, dir, "rev-parse", "HEAD^{tree}"))
	head := "tree " + tree + "\nauthor A <a@b.c> 0 +0000\ncommitter A <a@b.c> 0 +0000\n\n"
	header := []byte(fmt.Sprintf("commit %d\x00%s", int64(len(head))+size, head))
	chunk := bytes.Repeat([]byte("x"), 1<<20)
	tail := chunk[:size%int64(len(chunk))]

	objects := filepath.Join(dir, ".git", "objects")
	tmp, err := os.CreateTemp(objects, "huge-")
	if err != nil {
		t.Fatal(err)
	}
	defer tmp.Close()
	w := bufio.NewWriter(tmp)
	w.Write([]byte{0x78, 0x01}) // zlib's header: deflate, 32 KiB window, fastest
	h := sha1.New()
	h.Write(header)
	w.Write(deflated(t, header, false))
	sum := adler32.Checksum(header)
	whole, chunkSum, chunkDeflated := size/int64(len(chunk)), adler32.Checksum(chunk), deflated(t, chunk, false)
	for range whole {
		h.Write(chunk)
		w.Write(chunkDeflated)
		sum = adler32Combine(sum, chunkSum, int64(len(chunk)))
	}
	h.Write(tail)
	w.Write(deflated(t, tail, true)) // the last block
	sum = adler32Combine(sum, adler32.Checksum(tail), int64(len(tail)))
	w.Write(binary.BigEndian.AppendUint32(nil, sum))
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	oid := hex.EncodeToString(h.Sum(nil))
	if err := os.MkdirAll(filepath.Join(objects, oid[:2]), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(objects, oid[:2], oid[2:])); err != nil {
		t.Fatal(err)
	}
	// Not git update-ref: it would inflate the object to check it.
	if err := os.WriteFile(filepath.Join(dir, ".git", "refs", "heads", "main"), []byte(oid+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// deflated is data as raw deflate blocks that need nothing before them:
// ended by a sync flush, or as the stream's last block when last.
func deflated(t *testing.T, data []byte, last bool) []byte {
	t.Helper()
	var b bytes.Buffer
	fw, err := flate.NewWriter(&b, flate.BestSpeed)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fw.Write(data); err != nil {
		t.Fatal(err)
	}
	if last {
		err = fw.Close()
	} else {
		err = fw.Flush()
	}
	if err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// adler32Combine is the Adler-32 of x followed by y from their own sums and
// y's length (zlib's adler32_combine): the first sum is 1 plus the bytes,
// so it adds without the second's 1; the second sums the first after every
// byte, so each of y's bytes adds x's first sum less 1 once more.
func adler32Combine(x, y uint32, lenY int64) uint32 {
	const mod = 65521
	ax, bx, ay, by := uint64(x&0xffff), uint64(x>>16), uint64(y&0xffff), uint64(y>>16)
	a := (ax + ay + mod - 1) % mod
	b := (bx + by + uint64(lenY%mod)*((ax+mod-1)%mod)) % mod
	return uint32(b<<16 | a)
}

// The commit hugeCommit writes piece by piece is one git takes: it reads
// it back whole (checking zlib's checksum), and its bytes hash to its name.
func TestHugeCommitIsAValidObject(t *testing.T) {
	gittest.Home(t, "")
	dir := gittest.Init(t, nil)
	const size = 3<<20 + 12345 // three whole pieces and a tail
	hugeCommit(t, dir, size)
	var stderr bytes.Buffer
	cmd := exec.Command("git", "cat-file", "commit", "HEAD")
	cmd.Dir, cmd.Stderr = dir, &stderr
	body, err := cmd.Output()
	if err != nil {
		t.Fatalf("git cat-file: %v %q", err, stderr.String())
	}
	oid := strings.TrimSpace(git(t, dir, "rev-parse", "HEAD"))
	h := sha1.New()
	fmt.Fprintf(h, "commit %d\x00", len(body))
	h.Write(body)
	if got := hex.EncodeToString(h.Sum(nil)); got != oid {
		t.Fatalf("HEAD is %s, its bytes hash to %s", oid, got)
	}
	if !bytes.HasSuffix(body, bytes.Repeat([]byte("x"), size)) {
		t.Fatalf("the message is not %d x's: %d bytes, ending %q", size, len(body), body[max(0, len(body)-20):])
	}
	if out := git(t, dir, "fsck", "--no-dangling"); strings.Contains(out, "error") {
		t.Fatalf("git fsck: %s", out)
	}
}

// closedStatus runs one closed git status in dir in a process of its own
// (TestConfineHelper), so the peak resident size of the git children it
// waited for is that call's alone. It returns the outcome ("oom",
// "timeout", "ok" or the error), the peak in bytes and the time taken.
func closedStatus(t *testing.T, dir string, limitMiB int, landlockOff bool) (outcome string, peak int64, took time.Duration) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestConfineHelper$", "-test.v")
	cmd.Env = append(os.Environ(), "GATEHOUSE_CONFINE_HELPER="+dir, "GATEHOUSE_CONFINE_MIB="+strconv.Itoa(limitMiB))
	if landlockOff {
		cmd.Env = append(cmd.Env, "GATEHOUSE_CONFINE_NOLANDLOCK=1")
	}
	out, err := cmd.CombinedOutput()
	_, line, ok := strings.Cut(string(out), "RESULT ")
	if !ok {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	line, _, _ = strings.Cut(line, "\n")
	var ms int64
	if _, err := fmt.Sscanf(line, "%s %d %d", &outcome, &peak, &ms); err != nil {
		t.Fatalf("helper said %q: %v", line, err)
	}
	return outcome, peak, time.Duration(ms) * time.Millisecond
}

// TestConfineHelper is not a test of its own: closedStatus runs it in a
// child process.
func TestConfineHelper(t *testing.T) {
	dir := os.Getenv("GATEHOUSE_CONFINE_HELPER")
	if dir == "" {
		t.Skip("run by closedStatus only")
	}
	mib, _ := strconv.Atoi(os.Getenv("GATEHOUSE_CONFINE_MIB"))
	r := openWith(t, dir, Options{MemoryLimitMiB: mib, Timeout: 10 * time.Second})
	r.wall.landlockOffForTest = os.Getenv("GATEHOUSE_CONFINE_NOLANDLOCK") == "1"
	start := time.Now()
	_, err := r.run(ctx, closed, openDecision, call{sub: subStatus, opts: []string{"--porcelain=v2"}})
	took := time.Since(start)
	outcome := "ok"
	switch {
	case errors.Is(err, ErrOutOfMemory):
		outcome = "oom"
		if s := refusal.Sentence(err); !strings.Contains(s, mib2(mib)) {
			t.Errorf("sentence %q", s)
		}
	case errors.Is(err, ErrTimeout):
		outcome = "timeout"
	case err != nil:
		outcome = "failed"
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		t.Fatal(err)
	}
	t.Logf("closed status: %v", err)
	fmt.Printf("RESULT %s %d %d\n", outcome, ru.Maxrss<<10, took.Milliseconds())
}

func mib2(limitMiB int) string { return mib(memoryLimit(Options{MemoryLimitMiB: limitMiB})) }

// plainPeak runs plain git status in dir (no bound, no wall) for at most
// d and returns its peak resident size.
func plainPeak(t *testing.T, dir string, d time.Duration) int64 {
	t.Helper()
	return plainPeakUntil(t, dir, d, 1<<62)
}

// plainPeakUntil runs plain git status in dir until its resident peak
// reaches mark or d passes, and returns the peak.
func plainPeakUntil(t *testing.T, dir string, d time.Duration, mark int64) int64 {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	cmd := exec.CommandContext(c, "git", "status", "--porcelain")
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = cmd.Wait()
	}()
	status := fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)
	for {
		select {
		case <-done:
			return cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10
		case <-time.After(10 * time.Millisecond):
		}
		data, _ := os.ReadFile(status)
		for _, line := range strings.Split(string(data), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
				if kb, _ := strconv.ParseInt(f[1], 10, 64); kb<<10 >= mark {
					cancel()
				}
			}
		}
	}
}

// Attack (a): a small repository whose HEAD commit inflates to 3 GiB. git
// status reads HEAD's commit whole: 3 GB for every status. The closed gate
// refuses it within its deadline, the child bounded by the default 1 GiB.
func TestMemoryBoundHugeCommit(t *testing.T) {
	gittest.Home(t, "")
	if testing.Short() {
		t.Skip("builds a 3 GiB object (a few seconds)")
	}
	dir := gittest.Init(t, nil)
	built := time.Now()
	hugeCommit(t, dir, 3<<30)
	t.Logf("built a commit of 3 GiB in %v", time.Since(built).Round(time.Millisecond))

	outcome, peak, took := closedStatus(t, dir, 0, false)
	if outcome != "oom" || peak >= 1<<30 || took > 10*time.Second {
		t.Fatalf("closed status: %s after %v, peak %d MiB", outcome, took, peak>>20)
	}
	t.Logf("closed status refused in %v, git children's peak %d MiB", took, peak>>20)
	_, err := openWith(t, dir, Options{}).Status(ctx, closed)
	wantRefusal(t, err, ErrOutOfMemory, "(1 GiB)")

	if peak := plainPeak(t, dir, 60*time.Second); peak < 3<<30 {
		t.Fatalf("not reproduced: plain git status peaked at %d MiB", peak>>20)
	} else {
		t.Logf("plain git status peaked at %d MiB", peak>>20)
	}
}

// Attack (b): .git/info/attributes is a symlink to /dev/zero; git status
// reads it until it runs out of memory or time. Each wall holds it alone:
// the memory bound (Landlock off) ends it refused, not by the deadline,
// and the kernel wall refuses the open.
func TestMemoryBoundEndlessAttributes(t *testing.T) {
	gittest.Home(t, "")
	dir := gittest.Init(t, nil)
	statDirty(t, filepath.Join(dir, "README.md"))
	p := filepath.Join(dir, ".git", "info", "attributes")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", p); err != nil {
		t.Fatal(err)
	}
	// Plain git grows until it is stopped: it passes 256 MiB (the bound
	// below) within seconds; under a loaded CI machine it once took more
	// than 2, so the wait ends at the mark, not at a fixed time.
	start := time.Now()
	if peak := plainPeakUntil(t, dir, 30*time.Second, 256<<20); peak < 256<<20 {
		t.Fatalf("not reproduced: plain git status peaked at %d MiB in 30 s", peak>>20)
	} else {
		t.Logf("plain git status: %d MiB after %v", peak>>20, time.Since(start).Round(time.Millisecond))
	}

	// "oom", not "timeout": the bound ended it, not the helper's 10 s
	// deadline. How long that took is only logged; a loaded machine
	// stretches it, and the outcome is what tells the walls apart.
	outcome, peak, took := closedStatus(t, dir, 256, true)
	if outcome != "oom" || peak >= 256<<20 {
		t.Fatalf("memory bound alone: %s after %v, peak %d MiB", outcome, took, peak>>20)
	}
	t.Logf("memory bound alone: refused in %v, git children's peak %d MiB", took, peak>>20)

	if kernelWallIsOff() {
		return
	}
	testenv.Require(t, "landlock", landlock() > 0, "no Landlock on this kernel: the kernel wall's half is not shown")
	outcome, peak, took = closedStatus(t, dir, 0, false)
	// Landlock refuses the open of /dev/zero; what the child had mapped by
	// then varies with the machine's load, far below plain git's GiBs.
	if outcome == "timeout" || peak >= 256<<20 {
		t.Fatalf("kernel wall alone: %s after %v, peak %d MiB", outcome, took, peak>>20)
	}
	t.Logf("kernel wall alone (1 GiB bound): %s in %v, git children's peak %d MiB", outcome, took, peak>>20)
}

// statDirty leaves the tracked file at p stat-dirty: same content and
// size, a modification time its index entry cannot hold. git then must
// read the file (and, to read it, the attributes) to know whether it
// changed. Without this, git status reads it only when the index is
// racily clean, that is when the file and the index were written within
// the same second (Debian's git compares whole seconds): under load
// "git add" and "git commit" crossed a second now and then, git trusted
// the stat data, never opened the attributes, and the attack did not
// fire. A new size would not do: git takes that as changed unread.
func statDirty(t *testing.T, p string) {
	t.Helper()
	long := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := os.Chtimes(p, long, long); err != nil {
		t.Fatal(err)
	}
}

// A repository whose pack is larger than the bound still works under it:
// the forced pack windows map it piece by piece. Without them (plain git
// under the same RLIMIT_AS) it does not.
func TestMemoryBoundBigPackStillWorks(t *testing.T) {
	gittest.Home(t, "")
	if testing.Short() {
		t.Skip("builds a 320 MiB pack (make test runs it; make check, -short, does not)")
	}
	const blobs, blobSize = 320, 1 << 20 // a 320 MiB pack under a 256 MiB bound
	dir := gittest.Init(t, nil)
	built := time.Now()
	random, err := os.Open("/dev/urandom")
	if err != nil {
		t.Fatal(err)
	}
	defer random.Close()
	buf := make([]byte, blobSize)
	for i := range blobs {
		if _, err := io.ReadFull(random, buf); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("blob%03d.bin", i)), buf, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git(t, dir, "-c", "core.compression=0", "add", ".")
	git(t, dir, "commit", "-q", "-m", "big")
	git(t, dir, "-c", "pack.compression=0", "repack", "-a", "-d", "-q", "--window=0")
	packs, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.pack"))
	var size int64
	for _, p := range packs {
		if fi, err := os.Stat(p); err == nil {
			size += fi.Size()
		}
	}
	if size <= 256<<20 {
		t.Fatalf("the pack is only %d MiB", size>>20)
	}
	t.Logf("built a %d MiB pack in %v", size>>20, time.Since(built).Round(time.Millisecond))

	r := openWith(t, dir, Options{MemoryLimitMiB: 256, Timeout: 60 * time.Second})
	if _, err := r.Status(ctx, closed); err != nil {
		t.Fatalf("status under the bound: %v", err)
	}
	// show --stat inflates every blob of the commit, the whole pack.
	res, err := r.run(ctx, closed, openDecision, call{sub: subShow, opts: []string{"--stat", "--format=%H"}, args: []string{"HEAD"}})
	if err != nil || !strings.Contains(string(res.stdout), fmt.Sprintf("%d files changed", blobs)) {
		t.Fatalf("show --stat under the bound: %v %.200q", err, res.stdout)
	}

	// Without the forced windows, the same bound breaks git.
	cmd := exec.Command("prlimit", fmt.Sprintf("--as=%d", 256<<20), "git", "show", "--stat", "--format=%H", "HEAD")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if _, lookErr := exec.LookPath("prlimit"); lookErr == nil {
		if err == nil {
			t.Fatalf("not reproduced: plain git under 256 MiB read the pack: %.200q", out)
		}
		t.Logf("plain git under the same bound: %v %.200q", err, out)
	}
}

func TestOutOfMemoryRefusalKeepsCauseInLog(t *testing.T) {
	res := &result{exit: 128, stderr: []byte("fatal: Out of memory, malloc failed (tried to allocate 3221225561 bytes)\n")}
	err := refuseMemory(subStatus, 1<<30, res)
	if !errors.Is(err, ErrOutOfMemory) {
		t.Fatal(err)
	}
	if s := refusal.Sentence(err); strings.Contains(s, "malloc") || !strings.Contains(s, "(1 GiB)") {
		t.Fatalf("sentence %q", s)
	}
	if !strings.Contains(err.Error(), "malloc failed") {
		t.Fatalf("log text %q lacks the cause", err)
	}
}

// Landlock rules hold files, not names: a ~/.gitconfig made (or replaced)
// after a Repo's first closed call must still be readable by the next one,
// or git dies unable to read its config.
func TestWallFollowsConfigMadeLater(t *testing.T) {
	home := gittest.Home(t, "")
	needWall(t)
	dir := gittest.Init(t, nil)
	r := open(t, dir)
	global := call{sub: subConfig, opts: []string{"--global", "--get", "user.name"}, okExit: []int{1}}
	if err := os.Remove(filepath.Join(home, ".gitconfig")); err != nil {
		t.Fatal(err)
	}
	if _, err := r.run(ctx, closed, openDecision, global); err != nil {
		t.Fatal(err)
	}
	write(t, home, map[string]string{".gitconfig": "[user]\n\tname = Later\n"})
	res, err := r.run(ctx, closed, openDecision, global)
	if err != nil || strings.TrimSpace(string(res.stdout)) != "Later" {
		t.Fatalf("a config made later: %v %q", err, res.stdout)
	}
	write(t, home, map[string]string{".gitconfig.new": "[user]\n\tname = Renamed\n"})
	if err := os.Rename(filepath.Join(home, ".gitconfig.new"), filepath.Join(home, ".gitconfig")); err != nil {
		t.Fatal(err)
	}
	res, err = r.run(ctx, closed, openDecision, global)
	if err != nil || strings.TrimSpace(string(res.stdout)) != "Renamed" {
		t.Fatalf("a config replaced by rename: %v %q", err, res.stdout)
	}
}

// The user's own config may include files and name an excludes file
// anywhere; a closed git must still read them (it dies on an include it
// cannot read), while the repository's own names stay refused.
func TestWallReadsWhatUserConfigNames(t *testing.T) {
	other := t.TempDir()
	write(t, other, map[string]string{"inc": "[include]\n\tpath = nested\n", "nested": "[user]\n\tname = Nested\n", "ignore": "*.log\n"})
	gittest.Home(t, "[include]\n\tpath = "+filepath.Join(other, "inc")+"\n[core]\n\texcludesFile = "+filepath.Join(other, "ignore")+"\n")
	needWall(t)
	dir := gittest.Init(t, nil)
	write(t, dir, map[string]string{"x.log": "x\n"})
	r := open(t, dir)
	res, err := r.run(ctx, closed, openDecision, call{sub: subConfig, opts: []string{"--get", "user.name"}})
	if err != nil || strings.TrimSpace(string(res.stdout)) != "Nested" {
		t.Fatalf("user.name from a nested include: %v %q", err, res.stdout)
	}
	res, err = r.run(ctx, closed, openDecision, call{sub: subStatus, opts: []string{"--porcelain"}})
	if err != nil || strings.Contains(string(res.stdout), "x.log") || len(res.stderr) > 0 {
		t.Fatalf("the global excludes file was not read: %v %q %q", err, res.stdout, res.stderr)
	}
}
