import './index.css';
import './chat.css';
