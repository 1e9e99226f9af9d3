-- +goose Up
-- A snapshot may be stored in chunks as it is written: its row then has an
-- empty data, and chunk_id and chunks name its pieces in snapshot_chunks.
ALTER TABLE snapshots ADD COLUMN chunk_id BIGINT  NOT NULL DEFAULT 0;
ALTER TABLE snapshots ADD COLUMN chunks   INTEGER NOT NULL DEFAULT 0;
CREATE TABLE snapshot_chunks (
    id   BIGINT  NOT NULL,
    n    INTEGER NOT NULL,
    data BYTEA   NOT NULL,
    PRIMARY KEY (id, n)
);
