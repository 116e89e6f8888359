// An instant the bundled FHIR server's vendor profile has a Slot for: a quarter hour of its clinic hours (Monday to
// Saturday in America/New_York), `days` ahead of now and never on a Sunday, whichever side of daylight saving.
export function clinicTime(days: number, hour: number, minute = 0): string {
  const day = new Date(Date.now() + days * 86_400_000);
  if (day.getUTCDay() === 0) day.setUTCDate(day.getUTCDate() + 1);
  const date = day.toISOString().slice(0, 10);
  for (const offset of [5, 4]) {
    const instant = new Date(`${date}T${String(hour + offset).padStart(2, '0')}:${String(minute).padStart(2, '0')}:00.000Z`);
    const local = new Intl.DateTimeFormat('en-US', { timeZone: 'America/New_York', hour: 'numeric', hour12: false }).format(instant);
    if (Number(local) === hour) return instant.toISOString();
  }
  throw new Error(`no instant for ${date} ${hour}:00 in New York`);
}
