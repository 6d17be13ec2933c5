package hostenv

import (
	"strconv"
	"syscall"
)

// fsNames names the filesystems a temporary server's directory is likely to be on, by their
// statfs magic numbers (linux/magic.h).
var fsNames = map[int64]string{
	0x01021994: "tmpfs",
	0x858458f6: "ramfs",
	0xef53:     "ext4", // ext2, ext3 and ext4 share it
	0x58465342: "xfs",
	0x9123683e: "btrfs",
	0x794c7630: "overlayfs",
	0x2fc12fc1: "zfs",
	0xf2f52010: "f2fs",
	0x6969:     "nfs",
	0x65735546: "fuse",
}

// FSType names the filesystem path is on ("tmpfs", "ext4", …; a magic number in hex for
// one not listed), or "" when it cannot be read. On tmpfs an fsync costs nothing, so a
// server whose data lives there commits far faster than on a disk.
func FSType(path string) string {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return ""
	}
	magic := int64(st.Type) & 0xffffffff
	if name, ok := fsNames[magic]; ok {
		return name
	}
	return "0x" + strconv.FormatInt(magic, 16)
}
