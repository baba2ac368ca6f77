/**
 * A strict reader of HTTP-dates (RFC 9110 section 5.6.7), the date form of `Retry-After`.
 * Exactly three forms are accepted, all in GMT whatever the browser's time zone:
 *
 *   IMF-fixdate   Sun, 06 Nov 1994 08:49:37 GMT
 *   RFC 850       Sunday, 06-Nov-94 08:49:37 GMT
 *   asctime       Sun Nov  6 08:49:37 1994
 *
 * `Date.parse` is not used: it accepts many other shapes (and reads some of them, asctime
 * included, in local time), so a value the server did not mean as a date would turn into
 * a wait, or into "retry at once".
 */

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const MONTH = MONTHS.join("|");
const DAY = "Mon|Tue|Wed|Thu|Fri|Sat|Sun";
const DAY_LONG = "Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday";
const TIME = "(\\d{2}):(\\d{2}):(\\d{2})";

// HTTP-date is case-sensitive and has single spaces, so the patterns are literal.
const IMF_FIXDATE = new RegExp(`^(?:${DAY}), (\\d{2}) (${MONTH}) (\\d{4}) ${TIME} GMT$`);
const RFC_850 = new RegExp(`^(?:${DAY_LONG}), (\\d{2})-(${MONTH})-(\\d{2}) ${TIME} GMT$`);
// asctime pads a one-digit day with a space ("Nov  6"); "Nov 06" is allowed too.
const ASCTIME = new RegExp(`^(?:${DAY}) (${MONTH}) (\\d{2}| \\d) ${TIME} (\\d{4})$`);

interface Parts {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

/**
 * The time an HTTP-date names, in ms since the epoch, or undefined when `value` is not
 * an HTTP-date or names no real time (32 Dec, 25:99:99). `now` resolves the two-digit
 * year of the RFC 850 form.
 */
export function parseHttpDate(value: string, now: number): number | undefined {
  let match = IMF_FIXDATE.exec(value);
  if (match !== null) return toTime(parts(match[3], match[2], match[1], match.slice(4, 7)));
  match = ASCTIME.exec(value);
  if (match !== null) return toTime(parts(match[6], match[1], match[2], match.slice(3, 6)));
  match = RFC_850.exec(value);
  if (match === null) return undefined;
  const date = parts(match[3], match[2], match[1], match.slice(4, 7));
  return toTime({ ...date, year: fullYear(date, now) });
}

function parts(year: string | undefined, month: string | undefined, day: string | undefined, time: (string | undefined)[]): Parts {
  const [hour, minute, second] = time.map(Number) as [number, number, number];
  return { year: Number(year), month: MONTHS.indexOf(month ?? ""), day: Number(day), hour, minute, second };
}

function toTime(p: Parts): number | undefined {
  // Second 60 is a leap second: RFC 9110 allows it and JavaScript time has none, so it
  // counts as the second after :59.
  if (p.hour > 23 || p.minute > 59 || p.second > 60) return undefined;
  const leap = p.second === 60 ? 1 : 0;
  const date = new Date(0);
  // setUTCFullYear, not Date.UTC: Date.UTC reads years 0 to 99 as 1900 to 1999.
  date.setUTCFullYear(p.year, p.month, p.day);
  date.setUTCHours(p.hour, p.minute, p.second - leap, 0);
  // The date rolls over when the day does not exist in that month (31 Apr, 30 Feb).
  if (date.getUTCDate() !== p.day || date.getUTCMonth() !== p.month) return undefined;
  return date.getTime() + leap * 1000;
}

/**
 * RFC 9110: a two-digit year that would be more than 50 years in the future is the most
 * recent past year with those digits. So the year is the one with those last two digits
 * that falls in the 100 years ending 50 years from now.
 */
function fullYear(p: Parts, now: number): number {
  const limit = new Date(now);
  limit.setUTCFullYear(limit.getUTCFullYear() + 50);
  const at = (year: number): number => toTime({ ...p, year }) ?? Number.NaN;
  let year = Math.floor(new Date(now).getUTCFullYear() / 100) * 100 + p.year;
  if (at(year) > limit.getTime()) year -= 100;
  else if (at(year + 100) <= limit.getTime()) year += 100;
  return year;
}
