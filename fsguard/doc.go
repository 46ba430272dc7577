// Package fsguard is the only way a device's request reads, lists, searches
// or writes a file inside a served folder.
//
// Open a folder once with OpenRoot; every method then works beneath it by
// descriptor. A device's path (named unsafePath) is validated (ValidatePath:
// relative, no "..", no .git in any spelling), resolved inside the root one
// component at a time, and the rules are applied both to the path as sent and
// to what it resolves to:
//
//   - nothing inside .git, including through a symlink (link -> .git);
//   - below the full grant, no secret file (secretfiles), including a symlink
//     that resolves to one inside or outside the root;
//   - nothing outside the root;
//   - for everyone: only regular files with exactly one link, checked on the
//     opened handle (a hard link to ~/.ssh/id_rsa carries neither a secret
//     name nor a symlink); never a FIFO, socket or device (opened O_PATH on
//     Linux, so a device's driver never runs);
//   - below full, a root that is "/", the home folder or above it, or that
//     touches gatehouse's own data folder, is refused for reading.
//
// Reads come from the checked handle and nothing else, and are bounded
// (MaxText per text page, MaxImage per image, MaxImagePixels decoded).
// Listing shows secret names (flagged) but never their content below full;
// Search and Grep skip .git, secrets below full, non-regular and hard-linked
// files, and stop at their bounds with truncated. Write replaces a file
// atomically through a temporary file in its folder, refusing a conflict
// against the hash the device read.
//
// Errors are refusals (package refusal) whose sentence a device may see, in
// a PathError naming the operation and the device's own relative path; no
// absolute path of this computer is in either.
//
// Mechanism: on Linux the kernel walks every path (openat2 with
// RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS), so a parent
// folder swapped for a symlink mid-walk is refused rather than followed;
// where openat2 is refused the same rules come from a per-folder O_NOFOLLOW
// walk. Mechanism reports which is in force.
//
// Known limits: grep opens each file by name in its open folder with
// O_NOFOLLOW | O_NONBLOCK after the entry's type said "regular file"; a
// device node swapped in between has its driver opened (never read) before
// the handle check skips it. The same gap exists for every open on macOS,
// which has no O_PATH. A write checks that the file is unchanged just before
// its rename, but a change in the instant between is overwritten. A crash
// before the rename can leave a temporary ".NAME.gatehouse-*" file beside it.
package fsguard
