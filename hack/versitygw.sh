#!/usr/bin/env bash
# Builds versitygw, an S3-compatible server (Apache-2.0), which plays PLM's
# bundle storage in tests (SeaweedFS cannot be built from the module proxy).
exec "$(dirname "${BASH_SOURCE[0]}")/go-tool.sh" versitygw github.com/versity/versitygw/cmd/versitygw "${VERSITYGW_VERSION:-v1.8.0}"
