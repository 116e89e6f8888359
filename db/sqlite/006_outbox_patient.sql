-- The EMR patient a document was sent for, when it came from the EMR. The service's answer names its own
-- patient (patientServiceId); the pusher links the two, so the processor never claims that patient into the
-- EMR as a second record when its patient.created event arrives.
ALTER TABLE outbox_documents ADD COLUMN emr_patient_id TEXT;
