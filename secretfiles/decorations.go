package secretfiles

// Decoration is one way a tool names a file it makes from another one: a
// backup, an autosave, a swap or undo file, a lock, a copy, a conflict copy,
// a download in progress, a package manager's kept config. The file holds
// the other file's content (a lock holds who edits it), so a decorated name
// is judged by the name it was made from: a copy of .env is secret as .env
// is, a copy of .env.example is not.
type Decoration struct {
	// Forms are the names the tool gives, in a small pattern language that
	// ignores letter case, as the rules do:
	//
	//	{name}    the file's own name, one byte or more
	//	{.name}   the name with a dot put in front, unless it starts with one
	//	          (Vim and rsync hide what they make next to a file)
	//	{stem}    the name up to its extension; the form then ends in {ext},
	//	          the extension put back ("key - Copy.pem" is key.pem), or
	//	          empty for a name without one (".env - Copy" is .env)
	//	{n}       one or more digits
	//	{*}       any bytes, possibly none (a user's name, a revision)
	//	{word}    bytes without a dot (a date, a device, a random suffix):
	//	          before {ext} a dot would end the name's own extension
	//	[a-p]     one byte of a set
	//	{XXXXXX}  the six letters and digits mkstemp(3) picks; as the name is
	//	          written, one at least is a digit or upper case, which no
	//	          word a person types in lower case (".my.cnf.sample") has
	//	{tmp8}    the eight a-z, 0-9 and '_' Python's tempfile picks, one at
	//	          least not a letter (".template" is a word, not a suffix)
	//	{%path}   an absolute path with '%' for each '/' (Vim's and
	//	          Neovim's folders that end in "//"): it starts with '%',
	//	          or with a Windows drive, "c%%" for "C:\"
	//	{!path}   an absolute path with '!' for each '/' and "!!" for '!'
	//	          (Emacs's backup and auto-save folders): it starts with
	//	          '!', and a drive is "!drive_c!"
	//	{blanks}  spaces and dots
	//	{a|b}     one of the words
	//	{copy}    the word for "copy" in the languages of copyWords
	//
	// Anything else is literal.
	Forms []string
	// What names the decorated file as a reason starts: "a backup copy".
	What string
	// Why says why it holds the secret of the file it was made from.
	Why string
	// Source is the tool's own source or manual the form was read from.
	Source string
}

// copyWords are the words file managers put in a copy's name: English, and
// the translations GNOME Files ships for its copy name (po/*.po, msgctxt
// "Noun", msgid "Copy"). Windows Explorer, Finder and Thunar use their own
// catalogues; where a word there differs (Finder's Japanese "のコピー"),
// this list misses it.
var copyWords = []string{
	"copy",            // en
	"kopie",           // de, cs, nl
	"copie",           // fr, ro
	"copia", "copiar", // it; es (GNOME Files' Spanish name is the verb)
	"cópia",          // pt, pt_BR
	"kopia",          // sv, pl
	"kopi",           // da, nb
	"kopio",          // fi
	"kopya",          // tr
	"másolat",        // hu
	"копия", "копія", // ru, uk
	"αντιγραφή",             // el
	"コピー", "副本", "複製", "사본", // ja, zh_CN, zh_TW, ko
}

const (
	srcBackupIgnore = "github/gitignore Global/Backup.gitignore (*.bak, *.ori, *.orig, *.tmp)"
	srcLogrotate    = "logrotate(8) tabooext, the names left beside a config file (.rpmsave, .dpkg-old, ~, .swp, ...)"
	srcNautilus     = "GNOME/nautilus src/nautilus-filename-utilities.c (\"%s (%s)%s\", COPY_APPENDIX \"Copy\", \"Copy %zu\")"
)

// Decorations is the grammar, each row with why a name of that form holds
// the file's secret and where the form comes from. What is not here, and
// why, is in docs/secret-rules.md ("Copies, backups and temporary names").
var Decorations = []Decoration{
	// Editors.
	{Forms: []string{"#{name}#"}, What: "an Emacs auto-save file",
		Why:    "Emacs writes the unsaved text of the buffer beside the file every few hundred keystrokes",
		Source: "GNU Emacs manual, Auto Save Files (make-auto-save-file-name)"},
	{Forms: []string{"#{!path}#"}, What: "an Emacs auto-save file kept in another folder",
		Why:    "auto-save-file-name-transforms with uniquify (the default for remote files) names it by the whole absolute path",
		Source: "GNU Emacs Lisp manual, Auto-Saving (auto-save-file-name-transforms); lisp/files.el make-auto-save-file-name"},
	{Forms: []string{"{name}~"}, What: "a backup copy",
		Why:    "the content before the last save or copy: Emacs, Vim ('backupext' is \"~\"), nano -B, gedit, Kate, GNU cp/mv/install --backup and rsync --backup all name it so",
		Source: "GNU Emacs manual, Backup Names; vim src/optiondefs.h backupext \"~\"; gnulib lib/backupfile.c simple_backup_suffix \"~\"; rsync rsync.h BACKUP_SUFFIX \"~\""},
	{Forms: []string{"{name}.~{*}~"}, What: "a numbered backup copy",
		Why:    "Emacs version-control, GNU cp --backup=numbered, patch -V numbered and Bazaar keep each old content as name.~N~, Emacs VC a revision as name.~REV~",
		Source: "GNU Emacs manual, Backup Names; gnulib lib/backupfile.c \".~%d~\"; Emacs vc-version-backup-file-name"},
	{Forms: []string{"{!path}~", "{!path}.~{*}~"}, What: "an Emacs backup copy kept in another folder",
		Why:    "backup-directory-alist with an absolute folder puts every backup in it, named by the whole absolute path (a drive c: as /drive_c)",
		Source: "GNU Emacs Lisp manual, Backup Names; lisp/files.el make-backup-file-name-1 (subst-char-in-string ?/ ?! (string-replace \"!\" \"!!\" file))"},
	{Forms: []string{".#{name}"}, What: "an editor's lock file",
		Why:    "Emacs and JOE lock the file they edit with it; it holds who edits, not the text, and is judged with the file so that no name made from a secret's name is readable",
		Source: "GNU Emacs manual, Interlocking (create-lockfiles)"},
	{Forms: []string{".~lock.{name}#"}, What: "a LibreOffice lock file",
		Why:    "it holds who edits, not the text; judged with the file as the Emacs lock is",
		Source: "LibreOffice svl GenerateOwnLockFileURL (\".~lock.\" + name + \"#\")"},
	{Forms: []string{"{.name}.sw[a-p]", "{name}.sw[a-p]"}, What: "a Vim swap file",
		Why: "it holds the text being edited, for vim -r; a second session makes .swo, then .swn, down to .swa (Vim goes on to .svz and .saa only past sixteen sessions of one file, " +
			"and those collide with real extensions: .sig, .sql, .svg); nano's lock file has the same name",
		Source: "vim src/memline.c makeswapname and findswapname; src/fileio.c buf_modname (no dot added to a name that has one)"},
	{Forms: []string{"{%path}.sw[a-p]", "{%path}~", "{%path}"}, What: "a Vim or Neovim swap, backup or undo file kept in another folder",
		Why:    "in a 'directory' or 'backupdir' that ends in \"//\" (Neovim's defaults), and in any 'undodir' but \".\", they are named by the whole absolute path; an undo file holds the text of every change",
		Source: "vim src/memline.c make_percent_swname (fix_fname, each vim_ispathsep to '%'); src/undo.c u_get_undo_file_name; src/filepath.c vim_ispathsep (':' too on Windows); Neovim src/nvim/memline.c make_percent_swname, :help 'undodir'"},
	{Forms: []string{".{name}.un~"}, What: "a Vim undo file",
		Why:    "with 'undofile' and 'undodir' \".\" Vim writes the text of every change to .name.un~",
		Source: "vim src/undo.c u_get_undo_file_name (\"dir/name\" -> \"dir/.name.un~\")"},
	{Forms: []string{".{name}.kate-swp"}, What: "a Kate swap file",
		Why:    "KTextEditor journals unsaved edits there",
		Source: "KDE ktexteditor swap files (.name.kate-swp); Nextcloud sync-exclude.lst *.kate-swp"},
	{Forms: []string{"{name}___jb_{tmp|old}___"}, What: "a JetBrains safe-write file",
		Why:    "IntelliJ-based IDEs write the new text to name___jb_tmp___ and keep the old as name___jb_old___ while saving",
		Source: "IntelliJ Platform safe write (SafeFileOutputStream); the names file watchers skip: *___jb_tmp___, *___jb_old___"},
	{Forms: []string{"{name}.save", "{name}.save.{n}"}, What: "a nano emergency save",
		Why:    "nano writes the buffer to name.save (name.save.1 and on when that exists) when it is killed",
		Source: "nano(1), NOTES"},
	{Forms: []string{"{name}@{n}-{n}-{n}_{n}"}, What: "a Notepad++ session snapshot",
		Why:    "periodic backup saves each edited file every few seconds as name@yyyy-mm-dd_hhmmss",
		Source: "Notepad++ user manual, Preferences > Backup; community FAQ \"Periodic Backup vs AutoSave Plugin\""},

	// File managers.
	{Forms: []string{"{stem} {copy}{ext}", "{stem} {copy} {n}{ext}"}, What: "a Finder copy",
		Why:    "File > Duplicate in macOS names the copy \"name copy.ext\", then \"name copy 2.ext\"",
		Source: "jonschlinkert/strip-filename-increment test/darwin.js (mac OS-style increments: \"foo copy\", \"foo copy 2\")"},
	{Forms: []string{"{stem} {n}{ext}"}, What: "a kept-both copy",
		Why:    "Finder's Keep Both and iCloud Drive name the second file \"name 2.ext\"",
		Source: "jonschlinkert/add-filename-increment index.js (stem + ' ' + num off Windows)"},
	{Forms: []string{"{stem} - {copy}{ext}", "{stem} - {copy} ({n}){ext}"}, What: "a Windows Explorer copy",
		Why:    "copying a file into its own folder names it \"name - Copy.ext\", then \"name - Copy (2).ext\"",
		Source: "jonschlinkert/strip-filename-increment test/windows.js (\"foo (3) - Copy\")"},
	{Forms: []string{"Copy of {name}", "Copy ({n}) of {name}"}, What: "a Windows XP copy",
		Why:    "Windows before Vista named a copy in the same folder \"Copy of name\", then \"Copy (2) of name\"",
		Source: "Windows XP Explorer duplicate naming, as strip-filename-increment's non-standard cases list it"},
	{Forms: []string{"{stem} ({copy}){ext}", "{stem} ({copy} {n}){ext}"}, What: "a GNOME Files or Thunar copy",
		Why:    "GNOME Files 45 and later name a duplicate \"name (Copy).ext\", then \"name (Copy 2).ext\"; Thunar \"name (copy 1).ext\"; each in the desktop's language",
		Source: srcNautilus + "; xfce-mirror/thunar thunar/thunar-io-jobs-util.c (\"%s (copy %u)%s\")"},
	{Forms: []string{"{stem} (another copy){ext}", "{stem} ({n}{st|nd|rd|th} copy){ext}"}, What: "a GNOME Files copy",
		Why:    "GNOME Files up to 44, Nemo and Caja name the second copy \"name (another copy).ext\", then \"name (3rd copy).ext\"",
		Source: "GNOME/nautilus src/nautilus-file-operations.c before f1bb9aeed (\"%s (another copy)%s\", \"%s (%'drd copy)%s\")"},
	{Forms: []string{"{stem}-copy{ext}"}, What: "a copy",
		Why:    "a copy made by hand or by tools that join the word with a dash",
		Source: "jonschlinkert/strip-filename-increment index.js ([ -]+copy *[0-9]*)"},
	{Forms: []string{"{stem} ({n}){ext}", "{stem}({n}){ext}"}, What: "a numbered copy",
		Why:    "KDE (Dolphin), GNOME Files on a name clash, Windows on paste and Chromium on download add \" (1)\"; Firefox downloads add \"(1)\"",
		Source: "KDE/kcoreaddons src/lib/io/kfileutils.cpp suggestName (\" (1)\"); " + srcNautilus + " nautilus_filename_for_conflict; Firefox DownloadPaths.sys.mjs createNiceUniqueFile (base + \"(\" + i + \")\" + ext)"},
	{Forms: []string{". ({n}){name}"}, What: "a KDE copy of a dotfile",
		Why:    "for a name whose only dot is the first, KDE keeps \".\" as the stem and the name as the extension: \". (1).env\"",
		Source: "KDE/kcoreaddons src/lib/io/kfileutils.cpp suggestName (basename \".\" when lastIndexOf('.') == 0)"},

	// Version control and merge tools.
	{Forms: []string{"{name}.orig"}, What: "a pre-merge or pre-patch copy",
		Why:    "GNU patch -b, git mergetool (mergetool.keepBackup is on by default), hg revert and hg merge keep the file as it was as name.orig",
		Source: "patch(1); git git-mergetool.sh (mv -- \"$BACKUP\" \"$MERGED.orig\"); hg help revert; " + srcBackupIgnore},
	{Forms: []string{"{name}.rej"}, What: "a file of rejected hunks",
		Why:    "patch, git apply --reject and hg import write the hunks they could not apply, lines of the file, to name.rej",
		Source: "patch(1); git-apply(1) --reject"},
	{Forms: []string{"{stem}_{BACKUP|BASE|LOCAL|REMOTE}_{n}{ext}"}, What: "a git mergetool side",
		Why:    "git mergetool writes the three sides and the backup of a conflicted file as name_LOCAL_1234.ext (a dotfile in a folder becomes _LOCAL_1234.env)",
		Source: "git git-mergetool.sh merge_file (BACKUP=\"./${BASE}_BACKUP_$$$ext\")"},
	{Forms: []string{"{stem}~{base|local|other}{ext}", "{stem}~{base|local|other}.{tmp8}{ext}"}, What: "a Mercurial merge side",
		Why:    "hg merge hands the base and the other side to a merge tool as name~base.XXXXXXXX.ext (name~base.ext in a temporary folder)",
		Source: "mercurial filemerge.py _maketempfiles (\"%s~%s.\" % (basename, prefix))"},
	{Forms: []string{"{name}.{mine|working|svn-base}", "{name}.r{n}", "{name}.merge-{left|right}.r{n}"}, What: "a Subversion conflict or pristine copy",
		Why:    "svn update and merge leave each side of a conflict as name.mine, name.rOLD, name.rNEW; old working copies keep the last commit as .svn/text-base/name.svn-base",
		Source: "Version Control with Subversion, Resolve Any Conflicts; Subversion 1.6 working copy format (text-base)"},
	{Forms: []string{"{name}.{BASE|THIS|OTHER}"}, What: "a Bazaar conflict side",
		Why:    "bzr merge leaves the sides of a text conflict as name.BASE, name.THIS and name.OTHER",
		Source: "bzr help conflict-types (text conflicts)"},
	{Forms: []string{".#{name}.{n}.{n}", ".#{name}.{n}.{n}.{n}.{n}"}, What: "a CVS pre-merge copy",
		Why:    "cvs update keeps the file as it was before a merge as .#name.REVISION",
		Source: "CVS manual, Conflicts example (.#driver.c.1.4)"},
	{Forms: []string{"{name},v"}, What: "an RCS history file",
		Why:    "it holds every committed revision of the file",
		Source: "rcsfile(5)"},

	// Backups by hand and by system tools.
	{Forms: []string{"{name}.{bak|old|ori|tmp|backup}"}, What: "a backup copy",
		Why:    "the names people and tools give a copy kept before a change (Terraform writes terraform.tfstate.backup)",
		Source: srcBackupIgnore + "; " + srcLogrotate + "; Terraform docs, state backups"},
	{Forms: []string{"{name}%", "{name}-"}, What: "a backup copy",
		Why:    "dpkg takes name% beside a config file for a backup, and vipw and the shadow tools keep the previous file as name- (shadow-, passwd-)",
		Source: "dpkg lib/dpkg/dpkg.h REMOVECONFFEXTS (\"~\", \".bak\", \"%\"); shadow(5), vipw(8)"},
	{Forms: []string{"{name}.dpkg-{old|dist|new|tmp|bak|del|remove|backup}", "{name}.ucf-{old|new|dist}"}, What: "a Debian package's config copy",
		Why:    "dpkg and ucf keep the admin's version and the package's side by side when a config file changed on both",
		Source: "dpkg lib/dpkg/dpkg.h (DPKGOLDEXT, DPKGDISTEXT, DPKGNEWEXT, DPKGTEMPEXT); dpkg-maintscript-helper(1) (.dpkg-bak, .dpkg-remove, .dpkg-backup); ucf(1); " + srcLogrotate},
	{Forms: []string{"{name}.rpm{save|new|orig}", "{name}.pac{save|new|orig}", "{name}.apk-new"}, What: "a package manager's config copy",
		Why:    "rpm, pacman and apk keep the admin's edited config or the new default beside it",
		Source: "rpm(8) (.rpmsave, .rpmnew, .rpmorig); pacman(8), Handling config files (.pacnew, .pacsave); apk-tools (.apk-new); " + srcLogrotate},
	{Forms: []string{"._cfg{n}_{name}"}, What: "a Gentoo protected-config copy",
		Why:    "Portage writes an update to a protected config as ._cfg0000_name beside it",
		Source: "Gentoo Handbook, CONFIG_PROTECT and etc-update"},
	{Forms: []string{"{name}.aug{new|save}", "{name}.{disabled|cfsaved|new}"}, What: "a config tool's copy",
		Why:    "Augeas keeps the old file as name.augsave and writes name.augnew; a disabled or saved config is the same text under another name",
		Source: "Augeas docs, /augeas/save (backup, newfile); " + srcLogrotate},

	// Sync, transfer and download tools.
	{Forms: []string{"{.name}.{XXXXXX}"}, What: "an rsync transfer in progress",
		Why:    "rsync receives into .name.XXXXXX beside the file and renames it when done",
		Source: "rsync receiver.c get_tmpname (a dot, the name, and mkstemp's .XXXXXX)"},
	{Forms: []string{"{stem}.sync-conflict-{word}{ext}"}, What: "a Syncthing conflict copy",
		Why:    "Syncthing keeps the losing side of a conflict as name.sync-conflict-DATE-TIME-DEVICE.ext (for .env, .sync-conflict-...-DEVICE.env)",
		Source: "syncthing lib/model/folder_sendrecv.go conflictName"},
	{Forms: []string{".syncthing.{name}.tmp", "~syncthing~{name}.tmp"}, What: "a Syncthing transfer in progress",
		Why:    "Syncthing writes a file it receives to these names first",
		Source: "syncthing lib/fs/tempname.go (UnixTempPrefix, WindowsTempPrefix, \".tmp\")"},
	{Forms: []string{"{stem}~{n}-{n}{ext}"}, What: "a Syncthing version",
		Why:    "file versioning keeps each replaced file in .stversions as name~20060102-150405.ext",
		Source: "syncthing lib/versioner/util.go TagFilename; lib/versioner/versioner.go TimeFormat"},
	{Forms: []string{"{stem} ({*}conflicted copy{*}){ext}"}, What: "a conflicted copy",
		Why:    "Dropbox names the losing side \"name (Ann's conflicted copy 2024-01-02).ext\", Nextcloud and ownCloud \"name (conflicted copy 2024-01-02 123456).ext\"",
		Source: "Dropbox Help, What's a conflicted copy?; nextcloud/desktop src/common/utility.cpp makeConflictFileName"},
	{Forms: []string{"{stem}_conflict-{word}{ext}"}, What: "an ownCloud conflict copy",
		Why:    "older ownCloud and Nextcloud clients named it name_conflict-20240102-123456.ext",
		Source: "nextcloud/desktop src/common/utility.cpp isConflictFile (\"Old pattern\")"},
	{Forms: []string{".{name}.~{word}"}, What: "a Nextcloud download in progress",
		Why:    "the Nextcloud and ownCloud clients download into .name.~RANDOM beside the file",
		Source: "nextcloud/desktop src/libsync/propagatedownload.cpp createDownloadTmpFileName"},
	{Forms: []string{"{stem} (SFConflict {*}){ext}"}, What: "a Seafile conflict copy",
		Why:    "Seafile names the losing side \"name (SFConflict user date).ext\"",
		Source: "Seafile client conflict naming (SFConflict)"},
	{Forms: []string{".bak.{n}.{name}", ".unison.{name}.{word}.unison.tmp"}, What: "a Unison backup or transfer",
		Why:    "Unison keeps backups as .bak.N.name (backupprefix \".bak.$VERSION.\") and receives into .unison.name....unison.tmp",
		Source: "bcpierce00/unison src/stasher.ml backupprefix; src/os.ml tempFilePrefix, tempFileSuffixFixed"},
	{Forms: []string{"{name}.{crdownload|part|download}"}, What: "a download in progress",
		Why:    "Chromium, Firefox and Safari write a download to name.crdownload, name.part and name.download until it completes",
		Source: "Chromium download_target_determiner.cc kCrdownloadSuffix; Firefox DownloadCore (.part); Safari downloads (.download)"},

	// Archives of one file.
	{Forms: []string{"{name}.{gz|bz2|xz|zst|lz4|lzma|z|br}"}, What: "a compressed copy",
		Why:    "gzip, bzip2, xz and zstd replace name by name.gz and the like, and logrotate and savelog compress rotated copies so; the content is the file's",
		Source: "gzip(1), bzip2(1), xz(1), zstd(1), brotli(1); logrotate(8) compress"},
	{Forms: []string{"{name}.{zip|7z|tar|tgz|rar}"}, What: "an archive of the file",
		Why:    "Finder's Compress, Windows' Send to > Compressed folder, 7-Zip's and WinRAR's Add to archive name a one-file archive after the file",
		Source: "Apple Mac User Guide, Compress and uncompress files (name.zip); Microsoft Support, Zip and unzip files; 7-Zip and WinRAR shell menus"},

	// A careless save.
	{Forms: []string{"{name}{blanks}"}, What: "a careless save",
		Why:    "a name saved with trailing spaces or dots is the same file to a person, and Windows drops them when it opens one",
		Source: "Microsoft docs, Naming Files (do not end a name with a space or a period); found by the red team (.env with a trailing space)"},
}
