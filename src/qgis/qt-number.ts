/**
 * Numbers as Qt writes and reads them in QGIS documents: `QString::number(value)` (six significant
 * digits), `QDomElement::setAttribute(name, double)` (seventeen), `inf` and `nan` spelled as Qt does.
 */

/** A number QGIS wrote: `inf`, `-inf` and `nan` included; NaN for anything else that is not a number. */
export function readQtNumber(value: string): number {
  const trimmed = value.trim().toLowerCase();
  if (trimmed === 'inf' || trimmed === '+inf') return Infinity;
  if (trimmed === '-inf') return -Infinity;
  return trimmed === '' ? NaN : Number(trimmed);
}

/** C's `%.<precision>g`, which Qt's `'g'` format is: an exponent of at least two digits, trailing zeros dropped. */
export function qtNumber(value: number, precision = 6): string {
  if (Number.isNaN(value)) return 'nan';
  if (!Number.isFinite(value)) return value > 0 ? 'inf' : '-inf';
  if (value === 0) return '0';
  const [mantissa = '', exponentText = '0'] = value.toExponential(precision - 1).split('e');
  const exponent = Number(exponentText);
  const trim = (digits: string): string => (digits.includes('.') ? digits.replace(/\.?0+$/, '') : digits);
  if (exponent < -4 || exponent >= precision) {
    const sign = exponent < 0 ? '-' : '+';
    return `${trim(mantissa)}e${sign}${String(Math.abs(exponent)).padStart(2, '0')}`;
  }
  return trim(value.toFixed(precision - 1 - exponent));
}
