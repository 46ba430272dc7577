package gate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// The self-test (selfTest) starts git twice inside a fresh Landlock domain:
// about 60 ms, most of a short-lived 'gatehouse do'. Its answer can change
// only with what is in its key below, so a process given a place to keep
// it (Options.WallProofs, the state folder) believes a record whose key is
// this one, and runs the test otherwise:
//
//   - the kernel (its release and this boot's id): another kernel, or the
//     same one booted again with other options, may accept Landlock's rules
//     and not enforce them; so may a sandbox that emulates the system calls
//     (it has a boot id of its own);
//   - the Landlock ABI the kernel reports now, and Yama's ptrace_scope, which
//     root may raise without a reboot and which decides how the memory bound
//     is set;
//   - the gatehouse binary and the git binary, each by path and identity
//     (device, inode, size, change time): the rules are gatehouse's and the
//     program confined is that git, and either replaced is tested again.
//
// Only a passing answer is kept: a kernel that failed the test (or has no
// Landlock, which costs no test) is asked again by every process, so a
// fixed kernel is noticed and a broken one never skips its refusal. A
// record that is missing, unreadable, corrupt, or of another key is no
// record. The record says only that a test passed: the wall is still put
// up on every closed git, so a forged record can skip the proof that the
// kernel enforces the rules, never the rules; and the state folder that
// keeps it is the user's own, 0700, which a closed git cannot write.

// wallProof is the kept record: the key, and what the test found under it.
type wallProof struct {
	Key    wallKey `json:"key"`
	ABI    int     `json:"abi"`
	Ptrace bool    `json:"ptrace"`
}

// wallKey is everything the self-test's answer depends on.
type wallKey struct {
	Kernel      string `json:"kernel"`      // uname release and version
	BootID      string `json:"bootId"`      // /proc/sys/kernel/random/boot_id
	ABI         int    `json:"abi"`         // Landlock ABI the kernel reports
	PtraceScope string `json:"ptraceScope"` // Yama's, "" without Yama
	Gatehouse   string `json:"gatehouse"`   // this binary: path and identity
	Git         string `json:"git"`         // the git confined: path and identity
}

// keptWallState is the self-test's answer: proofs' record when its key is
// this one, else test's, kept in proofs when it passed.
func keptWallState(git string, proofs WallProofs, test func(string) state) state {
	if proofs == nil {
		return test(git)
	}
	key, err := currentWallKey(git)
	if err != nil {
		return test(git) // what the answer depends on is unknown: prove it
	}
	if st, ok := readWallProof(proofs, key); ok {
		return st
	}
	st := test(git)
	if st.abi > 0 && st.broken == nil {
		if data, err := json.Marshal(wallProof{Key: key, ABI: st.abi, Ptrace: st.ptrace}); err == nil {
			_ = proofs.WriteWallProof(data) // not kept: the next process tests again
		}
	}
	return st
}

// readWallProof returns the state proofs' record holds for key, if it holds
// one for exactly that key.
func readWallProof(proofs WallProofs, key wallKey) (state, bool) {
	data, err := proofs.ReadWallProof()
	if err != nil {
		return state{}, false
	}
	var p wallProof
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil || p.Key != key || p.ABI != key.ABI || p.ABI <= 0 {
		return state{}, false
	}
	return state{abi: p.ABI, ptrace: p.Ptrace}, true
}

// currentWallKey reads the key of this kernel, boot and binaries.
func currentWallKey(git string) (wallKey, error) {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return wallKey{}, err
	}
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return wallKey{}, err
	}
	scope, err := os.ReadFile("/proc/sys/kernel/yama/ptrace_scope")
	if err != nil && !os.IsNotExist(err) {
		return wallKey{}, err
	}
	self, err := os.Executable()
	if err != nil {
		return wallKey{}, err
	}
	k := wallKey{Kernel: unix.ByteSliceToString(u.Release[:]) + " " + unix.ByteSliceToString(u.Version[:]),
		BootID: strings.TrimSpace(string(boot)), ABI: landlock(), PtraceScope: strings.TrimSpace(string(scope))}
	if k.Gatehouse, err = binaryIdentity(self); err != nil {
		return wallKey{}, err
	}
	if k.Git, err = binaryIdentity(git); err != nil {
		return wallKey{}, err
	}
	if k.BootID == "" {
		return wallKey{}, fmt.Errorf("no boot id")
	}
	return k, nil
}

// binaryIdentity names the file path leads to by path and identity: its
// device, inode, size and change time, which any rewrite, rename over or
// chmod changes and no user can set back.
func binaryIdentity(path string) (string, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s dev=%d ino=%d size=%d ctime=%d.%09d", path, st.Dev, st.Ino, st.Size, st.Ctim.Sec, st.Ctim.Nsec), nil
}
