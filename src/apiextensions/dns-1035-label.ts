/** IsDNS1035Label with apimachinery's wording: CRD names and versions, and CEL's `format.dns1035Label()`. */
const dns1035LabelFmt = '[a-z]([-a-z0-9]*[a-z0-9])?';
const dns1035Label = new RegExp(`^${dns1035LabelFmt}$`);

export function isDns1035Label(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 63) errs.push('must be no more than 63 characters');
  if (!dns1035Label.test(value)) {
    errs.push(`a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '${dns1035LabelFmt}')`);
  }
  return errs;
}
