-- +goose Up
CREATE TABLE events (
    seq  INTEGER PRIMARY KEY,
    time INTEGER NOT NULL,
    data BLOB    NOT NULL
);
CREATE TABLE snapshots (
    seq  INTEGER PRIMARY KEY,
    time INTEGER NOT NULL,
    data BLOB    NOT NULL
);
