/** A result already turned into JSON text (by an isolation worker): sent as is. */
export class SerializedResult {
  readonly json: string;

  constructor(json: string) {
    this.json = json;
  }
}
