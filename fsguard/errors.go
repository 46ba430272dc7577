package fsguard

import (
	"fmt"

	"github.com/gatehouse/gatehouse/internal/refusal"
)

// Refusals. Each carries the sentence a device is shown (refusal.Sentence);
// callers branch on them with errors.Is.
var (
	ErrInvalidPath = refusal.New(refusal.BadParams, "invalid path",
		"This path is not valid here. Use a path relative to the project, without ..")
	ErrGitPath = refusal.New(refusal.Refused, "path inside .git",
		"Files inside .git can't be opened from your phone.")
	ErrOutsideRoot = refusal.New(refusal.Refused, "path leaves the root",
		"This path leads outside the project, so gatehouse won't open it from your phone.")
	ErrTooManyLinks = refusal.New(refusal.Refused, "too many symlinks",
		"This path goes through too many symlinks.")
	ErrSecret = refusal.New(refusal.Refused, "secret file",
		"This file may hold secrets. Give this phone Full access on the computer to open it.")
	ErrHardLink = refusal.New(refusal.Refused, "hard-linked file",
		"This file is hard-linked elsewhere, so gatehouse won't open it from your phone.")
	ErrNotRegular = refusal.New(refusal.Refused, "not a regular file",
		"This is not a regular file (a pipe, socket or device), so gatehouse won't open it from your phone.")
	ErrChanged = refusal.New(refusal.Retry, "file changed while opening",
		"This file changed while it was being opened. Try again.")
	ErrNotFound = refusal.New(refusal.NotFound, "not found",
		"This file or folder does not exist.")
	ErrIsDir = refusal.New(refusal.BadParams, "is a folder",
		"This is a folder, not a file.")
	ErrNotDir = refusal.New(refusal.BadParams, "not a folder",
		"This is not a folder.")
	ErrTooLarge = refusal.New(refusal.Refused, "file too large",
		"This file is too large to open from your phone.")
	ErrTooLargeToEdit = refusal.New(refusal.Refused, "file too large to edit",
		"This file is over 128 KiB, so it can't be edited from your phone.")
	ErrTextTooLarge = refusal.New(refusal.BadParams, "text too large",
		"This text is over 128 KiB, so it can't be saved from your phone.")
	ErrConflict = refusal.New(refusal.Conflict, "file changed since it was read",
		"This file changed on the computer since you opened it. Open it again to see the new version.")
	ErrExists = refusal.New(refusal.Conflict, "file already exists",
		"A file with this name already exists. Open it to edit it.")
	ErrHomeRoot = refusal.New(refusal.Refused, "root is home or above",
		"This project is your home folder; open files from it on this computer.")
	ErrAppDataRoot = refusal.New(refusal.Refused, "root touches gatehouse's data",
		"This project holds gatehouse's own data; open files from it on this computer.")
	ErrNotImage = refusal.New(refusal.Refused, "not an image",
		"This file is not an image gatehouse can show.")
	ErrImageTooLarge = refusal.New(refusal.Refused, "image too large",
		"This image is too large to show from your phone.")
	ErrShortQuery = refusal.New(refusal.BadParams, "query too short",
		"Search for at least 2 characters.")
	ErrBadQuery = refusal.New(refusal.BadParams, "bad query",
		"This search is not valid: use at most 1,000 characters, and for a pattern, a valid regular expression.")
)

// PathError records an operation, the device's path and the refusal or
// failure. Path is what the device sent (validated or quoted), never an
// absolute path of this computer, so the whole error may be logged.
type PathError struct {
	Op   string
	Path string
	Err  error
}

func (e *PathError) Error() string { return fmt.Sprintf("%s %q: %v", e.Op, e.Path, e.Err) }
func (e *PathError) Unwrap() error { return e.Err }

func pathErr(op, path string, err error) error {
	return &PathError{Op: op, Path: path, Err: err}
}
