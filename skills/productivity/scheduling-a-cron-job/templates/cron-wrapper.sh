#!/bin/bash
# Template for a job started by cron. Copy it, rename it, fill in the marked parts.
# Cron gives a bare environment, so everything here is explicit.
set -euo pipefail

# Fixed PATH: cron's default is only /usr/bin:/bin.
PATH=/usr/local/bin:/usr/bin:/bin
export PATH
# Predictable sorting, dates and messages.
export LANG=C.UTF-8 LC_ALL=C.UTF-8

JOB_NAME="example-job"                 # FILL IN: short name, used in log lines
WORK_DIR="/home/me/jobs/example"       # FILL IN: absolute directory the job works in

log() { printf '%s [%s] %s\n' "$(date '+%Y-%m-%dT%H:%M:%S%z')" "$JOB_NAME" "$*"; }

cd "$WORK_DIR"
log "start"

# FILL IN: the real work, with absolute paths for programs that are not in PATH above.
# Example:
#   /usr/bin/rsync -a --delete "$WORK_DIR/data/" /mnt/backup/data/

log "done"
