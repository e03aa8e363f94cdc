#!/bin/sh
# Writes the allowlist Squid reads from the environment, then runs Squid in the foreground (exec,
# so it gets the container's SIGTERM).
#   EGRESS_ALLOWED_DOMAINS  hosts, comma- or space-separated; ".example.com" allows its subdomains
#   EGRESS_GIT_URL          the git host's URL (GITEA_URL): its host and port are allowed too
#   EGRESS_ALLOWED_PORTS    ports, default "443 80"
set -eu
list=$(printf '%s' "${EGRESS_ALLOWED_DOMAINS:-}" | tr ', ' '\n\n' | sed '/^$/d')
ports=$(printf '%s' "${EGRESS_ALLOWED_PORTS:-443 80}" | tr ', ' '\n\n' | sed '/^$/d')
if [ -n "${EGRESS_GIT_URL:-}" ]; then
  authority=${EGRESS_GIT_URL#*://}
  authority=${authority%%/*}
  authority=${authority##*@}
  host=${authority%%:*}
  port=${authority#"$host"}
  port=${port#:}
  if [ -z "$port" ]; then
    case $EGRESS_GIT_URL in https://*) port=443 ;; *) port=80 ;; esac
  fi
  list=$(printf '%s\n%s' "$list" "$host")
  ports=$(printf '%s\n%s' "$ports" "$port")
fi
[ -n "$list" ] || { echo "egress: EGRESS_ALLOWED_DOMAINS is empty: nothing would be reachable" >&2; exit 2; }
printf '%s\n' "$list" | sort -u >/run/squid/allowed-domains
printf '%s\n' "$ports" | sort -u >/run/squid/allowed-ports
echo "egress: allowing $(tr '\n' ' ' </run/squid/allowed-domains)on ports $(tr '\n' ' ' </run/squid/allowed-ports)" >&2
exec squid -N -d 1 -f /etc/squid/squid.conf "$@"
