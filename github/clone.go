package github

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gatehouse/gatehouse/gate"
	"github.com/gatehouse/gatehouse/internal/refusal"
	"github.com/gatehouse/gatehouse/trust"
)

var ErrNoCloneFolder = refusal.New(refusal.Refused, "no free clone folder",
	"Every folder name for this repository in the clones folder is taken. Remove old clones on the computer.")

// maxCloneNames bounds the -2, -3 … tried for a clone's folder.
const maxCloneNames = 99

// cloneTimeout bounds one clone.
const cloneTimeout = 10 * time.Minute

// Repos lists the signed-in account's repositories (for a clone), a page
// from offset. gh (ghPath, or "gh" on PATH) runs outside every checkout for
// it.
func Repos(ctx context.Context, ghPath string, offset int) (*List, error) {
	limit, err := pageLimit(offset)
	if err != nil {
		return nil, err
	}
	out, err := gate.RunGH(ctx, ghPath, trust.Desktop(), gate.GHCall{Args: []string{"repo", "list", "--json", "nameWithOwner,description,isPrivate,updatedAt,url", "--limit", strconv.Itoa(limit)}})
	if err != nil {
		return nil, err
	}
	p, err := page(out, offset, limit)
	return &p, err
}

// CloneFolder is a folder claimed for one clone, held open: the folder
// and the clones folder it is in, by descriptor, so removing a failed
// clone removes that folder's content and that folder, whatever is renamed
// or swapped for a symlink by path meanwhile.
type CloneFolder struct {
	Path   string
	name   string
	parent int // the clones folder
	fd     int // the claimed folder
	// toolWritableForTest are folders a test's fake gh may write in,
	// inside the kernel wall.
	toolWritableForTest []string
}

// ClaimCloneFolder makes a new, empty folder for a clone of repo in
// clones: the repository's name, or name-2, name-3 … when taken. Making it
// is the claim (mkdirat fails on a name that exists, whoever made it), so
// two clones never share a folder and nothing there is ever overwritten.
func ClaimCloneFolder(clones string, repo Repo) (*CloneFolder, error) {
	if err := os.MkdirAll(clones, 0o755); err != nil {
		return nil, fmt.Errorf("clones folder: %w", err)
	}
	parent, err := unix.Open(clones, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("clones folder: %w", err)
	}
	for i := 1; i <= maxCloneNames; i++ {
		name := repo.Name
		if i > 1 {
			name = fmt.Sprintf("%s-%d", repo.Name, i)
		}
		err := unix.Mkdirat(parent, name, 0o755)
		if errors.Is(err, unix.EEXIST) {
			continue
		}
		if err != nil {
			unix.Close(parent)
			return nil, fmt.Errorf("clone folder: %w", err)
		}
		fd, err := unix.Openat(parent, name, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			unix.Close(parent)
			return nil, fmt.Errorf("clone folder: %w", err)
		}
		return &CloneFolder{Path: filepath.Join(clones, name), name: name, parent: parent, fd: fd}, nil
	}
	unix.Close(parent)
	return nil, ErrNoCloneFolder
}

// Close lets go of the folder, leaving it as it is.
func (f *CloneFolder) Close() {
	unix.Close(f.fd)
	unix.Close(f.parent)
}

// Remove removes what the clone wrote in its folder and the folder itself,
// through the descriptors held since the claim (never following a link),
// and lets go of it.
func (f *CloneFolder) Remove() error {
	defer f.Close()
	if err := removeAllAt(f.fd, 0); err != nil {
		return err
	}
	return unix.Unlinkat(f.parent, f.name, unix.AT_REMOVEDIR)
}

// removeAllAt empties the open folder fd, depth first, by name relative to
// it: a symlink is removed, never followed.
func removeAllAt(fd, depth int) error {
	if depth > 512 {
		return errors.New("clone folder: too deep to remove")
	}
	d, err := unix.Dup(fd)
	if err != nil {
		return err
	}
	dir := os.NewFile(uintptr(d), "clone")
	defer dir.Close()
	if _, err := unix.Seek(d, 0, 0); err != nil {
		return err
	}
	for {
		ents, err := dir.ReadDir(256)
		for _, e := range ents {
			if e.IsDir() {
				sub, err := unix.Openat(fd, e.Name(), unix.O_DIRECTORY|unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
				if err != nil {
					return err
				}
				err = removeAllAt(sub, depth+1)
				unix.Close(sub)
				if err != nil {
					return err
				}
				if err := unix.Unlinkat(fd, e.Name(), unix.AT_REMOVEDIR); err != nil {
					return err
				}
			} else if err := unix.Unlinkat(fd, e.Name(), 0); err != nil {
				return err
			}
		}
		if err != nil || len(ents) == 0 {
			return nil
		}
	}
}

// Clone clones repo into the claimed folder with the user's gh (ghPath, or
// "gh" on PATH), which picks their protocol and adds upstream for a fork.
// Its git gets the closed gate's options when t is closed; submodules are
// not cloned. When the clone fails, the folder and what the clone wrote in
// it are removed (and nothing else: see CloneFolder); either way the folder
// is let go.
func Clone(ctx context.Context, ghPath string, t trust.Trust, repo Repo, f *CloneFolder) error {
	_, err := gate.RunGH(ctx, ghPath, t, gate.GHCall{Args: []string{"repo", "clone", repo.String(), f.Path, "--", "--no-recurse-submodules"}, Timeout: cloneTimeout, Host: repo.Host,
		Writable: append([]string{f.Path}, f.toolWritableForTest...)})
	if err != nil {
		if rmErr := f.Remove(); rmErr != nil {
			return errors.Join(err, rmErr)
		}
		return err
	}
	f.Close()
	return nil
}
