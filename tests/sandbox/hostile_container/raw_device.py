# Hostile: looks for block devices (disks, loop devices) and reads them raw, searching for a marker that
# the test wrote to a loop device: no path of a file is opened, so no check on paths would see it.
import glob
import os
import stat

print("dev:", sorted(os.listdir("/dev")))
for path in sorted(set(glob.glob("/dev/*") + glob.glob("/dev/*/*") + ["__LOOP__"])):
    try:
        if not stat.S_ISBLK(os.stat(path).st_mode):
            continue
        with open(path, "rb") as device:
            if b"__MARK__" in device.read(64 * 1024 * 1024):
                print("FOUND-MARK", path)
            else:
                print("READ-DEVICE", path)
    except OSError as error:
        print("denied", path, type(error).__name__)
