#!/bin/bash
# ddtsim: the shared oracle's guest job (../shared/oracle/guest/guest-job.sh)
# with two steps added, for checking the DDT size model against real DDT blocks:
#   - after the copy, wait until the pool's dedup log is flushed (kstat
#     ddt_stats_sha256: log_active_entries = log_flushing_entries = 0; at most 800 s),
#     so that zdb -DD sees every entry in the ZAPs;
#   - after the usual zdb runs, `zdb -ddddd POOL` (mos-ddddd.txt) and every
#     level-0 block of the DDT ZAP objects read back with `zdb -R` (decompressed)
#     into ddtblk/OBJ-BLKOFFSET.bin (list in ddtblk/list.txt).
# Use: ZFS_ORACLE_JOB=$PWD/scripts/oracle/ddt-leaves-job.sh \
#        ../shared/oracle/zfs-oracle run --input DIR --out OUT -o dedup=on ... --no-objects
# then scripts/oracle/extract-ddt-leaves.py OUT testdata/ddt-validation/NAME.
# Runs INSIDE the zfs-oracle guest (started by /sbin/zfs-oracle-init).
# Reads /mnt/ctl/job.env (written by the host), writes results to the 9p
# share "out" (the host's OUTDIR), and writes OUT/status = "ok" on success.
set -u
export PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C.UTF-8 LANG=C.UTF-8 TZ=UTC
# shellcheck disable=SC1091
. /mnt/ctl/job.env
OUT=/mnt/out
[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd
P9OPTS=trans=virtio,version=9p2000.L,msize=524288

if ! mount -t 9p -o "$P9OPTS" out "$OUT"; then
    echo "guest-job: cannot mount the out share"; exit 1
fi

T_START=$(date +%s.%N)
T_LAST=$T_START
step() {   # step "name": log elapsed time since the previous step
    local now; now=$(date +%s.%N)
    awk -v n="$STEP_NAME" -v s="$T_START" -v l="$T_LAST" -v c="$now" \
        'BEGIN{printf "%-28s %7.2f s   (t=%7.2f)\n", n, c-l, c-s}' >> "$OUT/guest-timing.txt"
    T_LAST=$now; STEP_NAME=$1
    echo "=== $1"
}
fail() {
    echo "guest-job: FAILED: $*"
    echo "FAILED: $*" > "$OUT/status"
    sync
    exit 1
}
# cap FILE CMD...: stdout -> OUT/FILE (first line "# CMD..."), stderr ->
# OUT/FILE.stderr (deleted when empty; zdb prints progress noise there)
cap() {
    local f=$1 rc=0; shift
    { echo "# $*"; "$@"; } > "$OUT/$f" 2> "$OUT/$f.stderr" || rc=$?
    [ -s "$OUT/$f.stderr" ] || rm -f "$OUT/$f.stderr"
    if [ "$rc" != 0 ]; then
        echo "guest-job: warning: '$*' exited $rc"
        echo "# exit status $rc" >> "$OUT/$f"
    fi
    return 0
}

main() {
    # guest uptime when the job starts = kernel + initramfs + init time
    printf '%-28s %7.2f s   (guest uptime at job start)\n' "boot" "$(cut -d' ' -f1 /proc/uptime)" > "$OUT/guest-timing.txt"
    STEP_NAME="job setup"
    step "modprobe zfs"
    # shellcheck disable=SC2086
    modprobe zfs ${MODPARAMS:-} || fail "modprobe zfs ${MODPARAMS:-}"
    if [ "${SELFTEST:-0}" = 1 ]; then
        zfs version > "$OUT/zfs-version.txt" 2>&1
        uname -r >> "$OUT/zfs-version.txt"
        echo ok > "$OUT/status"
        return 0
    fi

    step "udev"
    # zpool create on whole disks waits for udev to announce the partitions
    /lib/systemd/systemd-udevd --daemon --resolve-names=never >/dev/null 2>&1 || fail "systemd-udevd"
    udevadm trigger --action=add --subsystem-match=block >/dev/null 2>&1
    udevadm settle --timeout=30
    local disks=() i p
    for (( i=0; i<VDEV_N; i++ )); do
        p=/dev/disk/by-id/virtio-zdisk$i
        for _ in $(seq 100); do [ -e "$p" ] && break; sleep 0.1; done
        [ -e "$p" ] || fail "vdev disk $p did not appear"
        disks+=("$p")
    done

    step "zpool create"
    local vspec=()
    [ "$VDEV_TYPE" = stripe ] || vspec+=("$VDEV_TYPE")
    vspec+=("${disks[@]}")
    echo "zpool create -f$POOLOPTS$DSOPTS -m /$POOL $POOL ${vspec[*]}" | tee "$OUT/zpool-create.txt"
    # shellcheck disable=SC2086
    zpool create -f $POOLOPTS $DSOPTS -m "/$POOL" "$POOL" "${vspec[@]}" >> "$OUT/zpool-create.txt" 2>&1 \
        || { cat "$OUT/zpool-create.txt"; fail "zpool create"; }

    step "copy input"
    mkdir -p /mnt/in
    if [ "${INPUT_MODE:-9p}" = ext4 ]; then
        mount -t ext4 -o ro,noload /dev/disk/by-id/virtio-zinput /mnt/in || fail "mount input image"
    else
        mount -t 9p -o "$P9OPTS,ro" in /mnt/in || fail "mount input share"
    fi
    # cp -a: recursive, keep symlinks, modes, owners, timestamps, hardlinks, xattrs
    # --sparse=always (default): every all-zero chunk (chunk = st_blksize of the
    # new ZFS file = recordsize) becomes a hole, whatever the source looked like.
    echo "cp -a --sparse=${SPARSE:-always} /mnt/in/. /$POOL/"
    cp -a --sparse="${SPARSE:-always}" /mnt/in/. "/$POOL/" || fail "cp -a --sparse=${SPARSE:-always}"
    umount /mnt/in

    step "zpool sync"
    sync
    zpool sync "$POOL" || fail "zpool sync"
    sync

    step "wait for the DDT log flush"
    for i in $(seq 400); do
        f=$(ls /proc/spl/kstat/zfs/"$POOL"/ddt_stats_sha256 2>/dev/null)
        [ -n "$f" ] || { echo "no ddt kstat" >> "$OUT/flush-wait.txt"; break; }
        a=$(awk '$1=="log_active_entries"{print $3}' "$f"); b=$(awk '$1=="log_flushing_entries"{print $3}' "$f")
        echo "t=$((2*i)) active=$a flushing=$b" >> "$OUT/flush-wait.txt"
        [ "$a" = 0 ] && [ "$b" = 0 ] && break
        sleep 2
    done
    cat "$f" > "$OUT/ddt-kstat.txt" 2>/dev/null

    step "capture zfs/zpool/du/ls"
    cap zfs-version.txt zfs version
    cap zpool-status-D.txt zpool status -D -v "$POOL"
    cap zpool-list-v.txt zpool list -v "$POOL"
    cap zpool-list-vp.txt zpool list -v -p "$POOL"
    cap zpool-get-all.txt zpool get all "$POOL"
    cap zfs-get-all.txt zfs get all "$POOL"
    cap zfs-get-all-p.txt zfs get -p all "$POOL"
    cap zfs-list-space.txt zfs list -p -o space,logicalused,logicalreferenced,compressratio,refcompressratio "$POOL"
    cap du-sk.txt du -sk "/$POOL"
    { echo "# du -sk --apparent-size /$POOL"; du -sk --apparent-size "/$POOL"; } >> "$OUT/du-sk.txt" 2>&1
    cap du-ak.txt du -ak "/$POOL"
    cap ls-ls.txt ls -lsaR --time-style=full-iso "/$POOL"
    # object number == inode number on ZFS; used for zdb -ddddd
    {
        printf 'object\ttype\tsize\tst_blocks_512\tpath\n'
        (cd "/$POOL" && find . -mindepth 1 -printf '%i\t%y\t%s\t%b\t%P\n' | sort -t$'\t' -k5)
    } > "$OUT/files.tsv"
    # module parameters (zstd ones live in zzstd.ko on some versions)
    for m in zfs zzstd spl icp zcommon; do
        [ -d "/sys/module/$m/parameters" ] || continue
        grep . /sys/module/$m/parameters/* 2>/dev/null | sed "s|/sys/module/$m/parameters/|$m.|"
    done > "$OUT/zfs-module-params.txt"

    step "zpool export"
    zpool export "$POOL" || fail "zpool export"

    # zdb against the exported pool (-e): sees exactly the final on-disk state.
    # The zdb runs are read-only, so they run concurrently.
    local ZDB=(zdb -e -p /dev/disk/by-id)
    step "zdb (parallel)"
    cap zdb-l.txt zdb -l "${disks[0]}-part1"
    cap zdb-S.txt "${ZDB[@]}" -S "$POOL" &
    if [ "${DEDUP:-off}" != off ]; then
        cap zdb-DD.txt "${ZDB[@]}" -DD "$POOL" &
    fi
    cap zdb-bb.txt "${ZDB[@]}" -bb "$POOL" &
    if [ "${OBJECTS:-1}" = 1 ]; then
        # block listing of every copied regular file; one zdb per 4096 objects
        local objs=() o
        # shellcheck disable=SC2207
        objs=($(awk -F'\t' 'NR>1 && ($2=="f") {print $1}' "$OUT/files.tsv"))
        (
            : > "$OUT/zdb-ddddd-objects.txt"
            for (( o=0; o<${#objs[@]}; o+=4096 )); do
                { echo "# ${ZDB[*]} -ddddd $POOL/ ${objs[*]:o:4096}"
                  "${ZDB[@]}" -ddddd "$POOL/" "${objs[@]:o:4096}"; } >> "$OUT/zdb-ddddd-objects.txt" \
                    2>> "$OUT/zdb-ddddd-objects.txt.stderr"
            done
            [ -s "$OUT/zdb-ddddd-objects.txt.stderr" ] || rm -f "$OUT/zdb-ddddd-objects.txt.stderr"
        ) &
    fi
    wait
    step "ddt leaves"
    "${ZDB[@]}" -ddddd "$POOL" > "$OUT/mos-ddddd.txt" 2> "$OUT/mos-ddddd.txt.stderr"
    mkdir -p "$OUT/ddtblk"
    awk '
      /^ +Object +lvl/ { hdr=1; next }
      hdr==1 { hdr=0; obj=$1; isddt = ($0 ~ /DDT ZAP algorithm/); next }
      isddt && $2 == "L0" {
        split($3, a, ":"); split($4, b, "L/"); sub(/P$/, "", b[2])
        print obj, $1, a[1], a[2], b[1], b[2]
      }' "$OUT/mos-ddddd.txt" > "$OUT/ddtblk/list.txt"
    while read -r obj blk vd off ls ps; do
        if [ "$ls" = "$ps" ]; then fl=r; else fl=dr; fi
        "${ZDB[@]}" -R "$POOL" "$vd:$off:$ls/$ps:$fl" > "$OUT/ddtblk/$obj-$blk.bin" 2> "$OUT/ddtblk/$obj-$blk.err"
        [ -s "$OUT/ddtblk/$obj-$blk.err" ] || rm -f "$OUT/ddtblk/$obj-$blk.err"
    done < "$OUT/ddtblk/list.txt"
    step "done"
    echo ok > "$OUT/status"
}

main 2>&1 | tee "$OUT/guest.log"
rc=${PIPESTATUS[0]}
sync
umount "$OUT" 2>/dev/null
exit "$rc"
