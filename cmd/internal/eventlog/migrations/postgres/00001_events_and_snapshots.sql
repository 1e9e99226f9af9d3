-- +goose Up
CREATE TABLE events (
    seq  BIGINT PRIMARY KEY,
    time BIGINT NOT NULL,
    data BYTEA  NOT NULL
);
CREATE TABLE snapshots (
    seq  BIGINT PRIMARY KEY,
    time BIGINT NOT NULL,
    data BYTEA  NOT NULL
);
