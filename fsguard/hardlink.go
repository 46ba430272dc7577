package fsguard

import "golang.org/x/sys/unix"

// hardLinked is the one hard-link check: a regular file with another name
// somewhere (more than one link). A hard link crosses no symlink and names
// no secret, so ~/.ssh/id_rsa linked into a project reads like any project
// file by its path; only the link count tells. Stat, the tree hazards and
// gate (through HardLinked) all ask here.
func hardLinked(st *unix.Stat_t) bool { return isRegular(st) && st.Nlink > 1 }

// HardLinked reports whether unsafePath (a symlink at its end not followed)
// is a regular file with more than one link: what gate asks before a phone
// stages, commits, discards or sees the diff of a file. A path that cannot be
// looked at (missing, invalid) is not hard-linked; the operation's own checks
// answer for it.
func (r *Root) HardLinked(unsafePath string) bool {
	info, err := r.Stat(unsafePath)
	return err == nil && info.HardLinked
}
