-- The bundled simulator's own state (a separate database from the adapter's).

-- Clinics, keys, subscriptions, patients, doctors, locations, appointments, documents: one JSON row each.
CREATE TABLE records (
  kind       TEXT NOT NULL,
  id         TEXT NOT NULL,
  clinic_id  TEXT,
  data       TEXT NOT NULL,
  PRIMARY KEY (kind, id)
);
CREATE INDEX records_clinic ON records (kind, clinic_id);

-- Webhook deliveries still to make or made: one row per (subscription, event copy).
CREATE TABLE deliveries (
  id               INTEGER PRIMARY KEY,
  subscription_id  TEXT    NOT NULL,
  event_id         TEXT    NOT NULL,
  event_type       TEXT    NOT NULL,
  order_key        TEXT    NOT NULL,   -- deliveries with one key go one after another (an appointment)
  body             TEXT    NOT NULL,
  attempts         INTEGER NOT NULL DEFAULT 0,
  next_attempt_at  INTEGER NOT NULL,
  state            TEXT    NOT NULL DEFAULT 'queued'  -- queued | delivered | given_up
);
CREATE INDEX deliveries_queued ON deliveries (subscription_id, order_key, id) WHERE state = 'queued';

-- Every webhook attempt.
CREATE TABLE delivery_log (
  id               INTEGER PRIMARY KEY,
  subscription_id  TEXT    NOT NULL,
  event_id         TEXT    NOT NULL,
  event_type       TEXT    NOT NULL,
  attempt          INTEGER NOT NULL,
  status_code      INTEGER,
  error            TEXT,
  at               INTEGER NOT NULL
);

-- What reached patients' messaging accounts.
CREATE TABLE messages (
  id               INTEGER PRIMARY KEY,
  clinic_id        TEXT    NOT NULL,
  document_id      TEXT    NOT NULL,
  phone            TEXT    NOT NULL,
  text             TEXT    NOT NULL,
  attachment_name  TEXT    NOT NULL,
  mime_type        TEXT    NOT NULL,
  size             INTEGER NOT NULL,
  sha256           TEXT    NOT NULL,
  at               INTEGER NOT NULL
);

CREATE TABLE alerts (
  id               INTEGER PRIMARY KEY,
  kind             TEXT    NOT NULL,   -- delivery_given_up | subscription_paused
  subscription_id  TEXT,
  event_id         TEXT,
  message          TEXT    NOT NULL,
  at               INTEGER NOT NULL
);

-- Simulator settings that survive a restart (the clock's offset).
CREATE TABLE meta (
  key    TEXT PRIMARY KEY,
  value  TEXT NOT NULL
);
