module pstrain/tests/kind/runc-wrapper

go 1.24.0
