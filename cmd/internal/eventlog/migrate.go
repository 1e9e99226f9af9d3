package eventlog

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"log/slog"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

// migrations holds one directory of numbered goose files per dialect. A new
// schema version is a new file in each; a file once released never changes.
//
//go:embed migrations
var migrations embed.FS

// versionTable is where goose keeps the schema version, named so that it
// cannot collide with another program's migrations in a shared database.
const versionTable = "governor_eventlog_schema"

// migrate brings the schema at where (for messages) up to the newest version
// this binary knows, and refuses a database that a newer binary wrote.
func migrate(ctx context.Context, db *sql.DB, dialect goose.Dialect, dir, where string, log *slog.Logger) error {
	fsys, err := fs.Sub(migrations, "migrations/"+dir)
	if err != nil {
		return fmt.Errorf("migrations for %s: %w", dir, err)
	}
	opts := []goose.ProviderOption{goose.WithTableName(versionTable), goose.WithDisableGlobalRegistry(true), goose.WithSlog(log)}
	if dialect == goose.DialectPostgres {
		locker, err := lock.NewPostgresSessionLocker()
		if err != nil {
			return fmt.Errorf("migration lock: %w", err)
		}
		opts = append(opts, goose.WithSessionLocker(locker))
	}
	p, err := goose.NewProvider(dialect, db, fsys, opts...)
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	have, err := p.GetDBVersion(ctx)
	if err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	sources := p.ListSources()
	know := sources[len(sources)-1].Version
	if have > know {
		return &SchemaTooNewError{Where: where, Have: have, Know: know}
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrate schema from version %d to %d: %w", have, know, err)
	}
	return nil
}
