#!/usr/bin/env sh
# k6 trusts the system's root certificates only; Go (k6's runtime) reads them from SSL_CERT_FILE
# on Linux. This runs k6 with SSL_CERT_FILE=$ORCH_CA when ORCH_CA is set, so the server's own CA
# verifies it. Usage: k6/run.sh k6/crud.js [more k6 run arguments]
set -eu
if [ -n "${ORCH_CA:-}" ]; then
  SSL_CERT_FILE="$ORCH_CA"
  export SSL_CERT_FILE
fi
exec k6 run "$@"
