// The one rule for which HTTP answers can pass by themselves, whoever answered (the EMR's FHIR calls,
// document contents and token endpoint; the service's integration API): server errors, rate limiting and
// request timeouts. Every other 4xx is a refusal that a retry will not cure.
export const isTransientStatus = (status: number): boolean => status >= 500 || status === 429 || status === 408;
